import type { SessionService } from '@sbc/proto/sbc/account/v1/sessions_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { AccountServiceDeps } from './account-service';

export function createSessionService(_deps: AccountServiceDeps): RpcImplementation<typeof SessionService> {
  return {};
}

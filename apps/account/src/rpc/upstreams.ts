import type { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { AccountServiceDeps } from './account-service';

export function createUpstreamService(_deps: AccountServiceDeps): RpcImplementation<typeof UpstreamService> {
  return {};
}

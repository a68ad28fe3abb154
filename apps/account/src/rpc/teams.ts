import type { TeamService } from '@sbc/proto/sbc/account/v1/teams_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { AccountServiceDeps } from './account-service';

export function createTeamService(_deps: AccountServiceDeps): RpcImplementation<typeof TeamService> {
  return {};
}

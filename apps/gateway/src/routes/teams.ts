import { Router } from 'express';
import type { TeamService } from '@sbc/proto/sbc/account/v1/teams_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';

export function teamRoutes(_deps: { authorize: Authorize; teams: RpcClientOf<typeof TeamService> }): Router {
  return Router();
}

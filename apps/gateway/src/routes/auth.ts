import { Router } from 'express';
import type { SessionService } from '@sbc/proto/sbc/account/v1/sessions_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';

export function authRoutes(_deps: { authorize: Authorize; sessions: RpcClientOf<typeof SessionService> }): Router {
  return Router();
}

import { Router } from 'express';
import type { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';

export function upstreamRoutes(_deps: { authorize: Authorize; upstreams: RpcClientOf<typeof UpstreamService> }): Router {
  return Router();
}

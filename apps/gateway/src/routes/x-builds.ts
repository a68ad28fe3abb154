import { Router } from 'express';
import type { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';

export interface XBuildRoutesDeps {
  authorize: Authorize;
  xbuilds: RpcClientOf<typeof XBuildsService>;
}

/** X builds intake, queue, jobs and operator controls, answered by the builds service. */
export function xBuildRoutes(_deps: XBuildRoutesDeps): Router {
  return Router();
}

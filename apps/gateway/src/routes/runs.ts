import { Router } from 'express';
import type { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';

export interface RunRoutesDeps {
  authorize: Authorize;
  runs: RpcClientOf<typeof RunsService>;
  /** Aborted when the edge starts draining (event streams end on it). */
  draining: AbortSignal;
}

/** Projects, runs, run events and webhook endpoints, answered by the runs service. */
export function runRoutes(_deps: RunRoutesDeps): Router {
  return Router();
}

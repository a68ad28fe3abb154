import { Router } from 'express';
import { captureRoutes as specs } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import type { Authorize } from '../auth/authorize';
import type { CaptureStore } from '../capture/capture-store';
import { mount } from '../http/mount';

export interface CaptureRoutesDeps {
  authorize: Authorize;
  captures: CaptureStore;
}

/** The playground's read of a call's upstream exchange: the signed-in account's own captures only. */
export function captureRoutes(deps: CaptureRoutesDeps): Router {
  const router = Router();
  mount(router, specs.getCallCapture, deps.authorize, async ({ params, principal }) => {
    const json = await deps.captures.get(principal.userId, params.request_id);
    // Another account's capture and none at all read the same: nothing says one exists.
    if (json === undefined) throw new ApiError('not_found', 'No capture of this call is kept for you.');
    return { status: 200, body: JSON.parse(json) as unknown };
  });
  return router;
}

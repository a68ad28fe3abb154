import type { NextFunction, Request, Response } from 'express';
import type { CallerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import { CallResponse } from '../model-calls/call-response';

/**
 * The error handler of a router whose routes answer in a model dialect's error body (stored Responses, files,
 * batches: the official SDKs parse these as they parse a model call's). Only errors raised by that router's
 * routes come here: an error from an earlier router passes it by.
 */
export function refuseInDialect(adapter: CallerDialect, deps: { baseUrl: string; logger: Logger }) {
  return (thrown: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = ApiError.from(thrown);
    if (error.status >= 500)
      deps.logger.error(
        { requestId: req.requestId, route: req.route?.path, err: error.cause ?? error },
        'request failed',
      );
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    new CallResponse(res, adapter, req.requestId, deps.baseUrl).refuse(error);
  };
}

import type { NextFunction, Request, Response } from 'express';
import { ApiError, toEnvelope } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import { closeIfUnread } from './json-body';

function sendError(res: Response, error: ApiError, requestId: string, baseUrl: string): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  closeIfUnread(res);
  res.status(error.status).json(toEnvelope(error, requestId, baseUrl));
}

/** Renders every refusal in the shared envelope; a 5xx is logged once and carries no internal detail. */
export function errorHandler(deps: { baseUrl: string; logger: Logger }) {
  return (thrown: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = ApiError.from(thrown);
    if (error.status >= 500) {
      deps.logger.error(
        { requestId: req.requestId, route: req.route?.path, err: error.cause ?? error },
        'request failed',
      );
    } else if (error.code === 'client_closed_request') {
      deps.logger.info({ requestId: req.requestId, route: req.route?.path }, 'the caller hung up mid-request');
    }
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    sendError(res, error, req.requestId, deps.baseUrl);
  };
}

export function notFound() {
  return (req: Request, _res: Response, next: NextFunction) => {
    next(new ApiError('not_found', `No route ${req.method} ${req.path}.`));
  };
}

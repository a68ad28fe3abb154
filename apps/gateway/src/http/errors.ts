import type { NextFunction, Request, Response } from 'express';
import { ApiError, toEnvelope } from '@sbc/errors';
import type { Logger } from '@sbc/logging';

/** Express's body-parser failures, recognised by their documented `type`. */
function fromBodyParser(error: unknown): ApiError | undefined {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed') return new ApiError('invalid_request', 'The request body is not valid JSON.', { param: 'body', cause: error });
  if (type === 'entity.too.large') return new ApiError('request_too_large', undefined, { cause: error });
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new ApiError('unsupported_media_type', undefined, { cause: error });
  return undefined;
}

export function sendError(res: Response, error: ApiError, requestId: string, baseUrl: string): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(toEnvelope(error, requestId, baseUrl));
}

/** Renders every refusal in the shared envelope; a 5xx is logged once and carries no internal detail. */
export function errorHandler(deps: { baseUrl: string; logger: Logger }) {
  return (thrown: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = fromBodyParser(thrown) ?? ApiError.from(thrown);
    if (error.status >= 500) {
      deps.logger.error({ requestId: req.requestId, route: req.route?.path, err: error.cause ?? error }, 'request failed');
    }
    if (res.headersSent) {
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

import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { readJsonBody } from '../model-calls/body';
import { unsafeStringError } from './hostile-input';
import { findUnsafeString } from './unsafe-strings';

/**
 * The body limit of every route but the model calls (which take MAX_BODY_BYTES): the account surface,
 * builds and runs. The largest body any of them accepts (a device declaring 2,000 held models) is well under.
 */
const REST_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads a route's JSON body; mounted after the route's credential check, so a stranger's body is never read.
 * A NUL or an unpaired surrogate in any string is refused here, before a schema or a service sees it.
 */
export function jsonBodyWithin(maxBytes: number) {
  return async function jsonBody(req: Request, _res: Response, next: NextFunction): Promise<void> {
    const { value, unsafeEscapes } = await readJsonBody(req, maxBytes, { optional: true });
    const unsafe = unsafeEscapes && unsafeStringError(findUnsafeString(value));
    if (unsafe) throw unsafe;
    req.body = value;
    next();
  };
}

export const jsonBody = jsonBodyWithin(REST_MAX_BODY_BYTES);

/**
 * An answer sent before the caller's body was fully received (a refusal, most often of a stranger) closes
 * the connection, so the rest of that body is not read.
 */
export function closeIfUnread(res: ServerResponse): void {
  if (!res.req.complete && !res.headersSent) res.setHeader('connection', 'close');
}

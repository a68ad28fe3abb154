import type { NextFunction, Request, Response } from 'express';
import { newId } from '@sbc/ids';

// An incoming id is kept when it is a plausible id; anything else (too long, odd characters) is replaced
// so it cannot smuggle text into logs or headers.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

/** The request's id: the caller's `x-request-id` when it is a plausible id, else a fresh one. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && ACCEPTABLE_ID.test(incoming) ? incoming : newId('req');
}

/** Keeps `x-request-id` when sent, generates one otherwise, and echoes it on every response. */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    req.requestId = requestIdFor(req.headers['x-request-id']);
    res.setHeader('x-request-id', req.requestId);
    next();
  };
}

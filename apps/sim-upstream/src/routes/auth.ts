import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { SimError, requestDialect, sendError } from '../wire/errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The key a request presents: `Authorization: Bearer <key>` (both SDKs) or `x-api-key` (Anthropic). */
export function presentedKey(headers: { authorization?: string; 'x-api-key'?: string | string[] }): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  const apiKey = headers['x-api-key'];
  return bearer || (typeof apiKey === 'string' ? apiKey : undefined);
}

/**
 * Refuses calls without the configured key, with the vendor-shaped 401 for the caller's dialect. With no key
 * configured every call passes (the simulator's default).
 */
export function requireApiKey(apiKey: string | undefined): RequestHandler {
  if (apiKey === undefined) return (_req, _res, next) => next();
  const expected = digest(apiKey);
  return (req, res, next) => {
    const key = presentedKey(req.headers);
    if (key !== undefined && timingSafeEqual(digest(key), expected)) {
      next();
      return;
    }
    const dialect = requestDialect(req);
    const message =
      key === undefined
        ? dialect === 'anthropic'
          ? 'x-api-key header is required'
          : "You didn't provide an API key. Provide it as a Bearer token in the Authorization header."
        : dialect === 'anthropic'
          ? 'invalid x-api-key'
          : 'Incorrect API key provided to sim-upstream.';
    sendError(res, dialect, new SimError(401, message));
  };
}

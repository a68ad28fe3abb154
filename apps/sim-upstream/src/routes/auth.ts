import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { SimError, requestDialect, sendError, type ErrorDialect } from '../wire/errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The key a request presents: `Authorization: Bearer <key>` (both SDKs) or `x-api-key` (Anthropic). */
export function presentedKey(headers: { authorization?: string; 'x-api-key'?: string | string[] }): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  const apiKey = headers['x-api-key'];
  return bearer || (typeof apiKey === 'string' ? apiKey : undefined);
}

/**
 * Checks the configured key: undefined when the call may go on, else the vendor-shaped 401 for the caller's
 * dialect. With no key configured every call passes (the simulator's default).
 */
export function keyCheck(
  apiKey: string | undefined,
): (headers: Parameters<typeof presentedKey>[0], dialect: ErrorDialect) => SimError | undefined {
  if (apiKey === undefined) return () => undefined;
  const expected = digest(apiKey);
  return (headers, dialect) => {
    const key = presentedKey(headers);
    if (key !== undefined && timingSafeEqual(digest(key), expected)) return undefined;
    const message =
      key === undefined
        ? dialect === 'anthropic'
          ? 'x-api-key header is required'
          : "You didn't provide an API key. Provide it as a Bearer token in the Authorization header."
        : dialect === 'anthropic'
          ? 'invalid x-api-key'
          : 'Incorrect API key provided to sim-upstream.';
    return new SimError(401, message);
  };
}

/** Express middleware for keyCheck. */
export function requireApiKey(apiKey: string | undefined): RequestHandler {
  const check = keyCheck(apiKey);
  return (req, res, next) => {
    const dialect = requestDialect(req);
    const refusal = check(req.headers, dialect);
    if (refusal) sendError(res, dialect, refusal);
    else next();
  };
}

import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '@sbc/errors';
import { isUnsafe } from './unsafe-strings';

/**
 * The deepest nesting of arrays and objects a JSON body may have, on every route (model calls included). Real
 * bodies stay under ten levels (a tool's JSON schema is the deepest thing a caller sends); past a few thousand,
 * recursive walks over the parsed value (validation, translation, logging) would overflow the stack.
 */
export const MAX_JSON_DEPTH = 64;

const STRING_RULE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/**
 * Whether `text`'s arrays and objects nest deeper than `max`; scanned before parsing, so nothing deep is ever
 * built. A string is skipped with `indexOf` to its closing quote (one not escaped by an odd run of
 * backslashes): a model call's body is mostly the strings of its prompt, which a loop over every character
 * made the edge's costliest step per byte of prompt.
 */
export function exceedsJsonDepth(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let close = text.indexOf('"', i + 1);
      while (close > 0 && escaped(text, close)) close = text.indexOf('"', close + 1);
      // An unterminated string holds the rest: no bracket in it counts (the parser refuses the body anyway).
      if (close < 0) return false;
      i = close;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** Whether the character at `at` is escaped: preceded by an odd run of backslashes. */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
  return (slashes & 1) === 1;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A body's text, refused when its bytes are not UTF-8 (JSON text is UTF-8; a lenient decode would swap in U+FFFD
 * silently).
 */
export function decodeUtf8Body(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError('invalid_request', 'The request body is not valid UTF-8.', { param: 'body' });
  }
}

/** A percent-decoded URL part, or undefined when an escape is malformed or spells invalid UTF-8. */
function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/**
 * Where a request URL is not well-formed text: `path` or `query.<name>` when a percent-escape is malformed,
 * spells invalid UTF-8, or decodes to a NUL or an unpaired surrogate; undefined when the URL is fine.
 */
export function findHostileUrlPart(url: string): string | undefined {
  const mark = url.indexOf('?');
  const path = decoded(mark < 0 ? url : url.slice(0, mark));
  if (path === undefined || isUnsafe(path)) return 'path';
  if (mark < 0) return undefined;
  for (const pair of url.slice(mark + 1).split('&')) {
    const eq = pair.indexOf('=');
    const name = decoded((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
    if (name === undefined || isUnsafe(name)) return 'query';
    const value = eq < 0 ? '' : decoded(pair.slice(eq + 1).replace(/\+/g, ' '));
    if (value === undefined || isUnsafe(value)) return `query.${name}`;
  }
  return undefined;
}

/**
 * Refuses, before any route sees it, a URL whose path or query is not well-formed text (400 `invalid_request`, `param`
 * naming where).
 */
export function refuseHostileUrl() {
  return (req: Request, _res: Response, next: NextFunction) => {
    const where = findHostileUrlPart(req.originalUrl ?? req.url);
    if (where === undefined) return next();
    const what =
      where === 'path'
        ? 'The path'
        : where === 'query'
          ? 'A query parameter name'
          : `The query parameter ${where.slice('query.'.length)}`;
    next(
      new ApiError(
        'invalid_request',
        `${what} is not well-formed text: a malformed percent-escape, invalid UTF-8, a NUL or an unpaired surrogate.`,
        { param: where },
      ),
    );
  };
}

/** A parsed body's first unsafe string, as a 400 naming its field; undefined when every string is fine. */
export function unsafeStringError(where: string | undefined): ApiError | undefined {
  if (where === undefined) return undefined;
  return ApiError.invalid([
    { path: where === '' ? 'body' : where, code: 'invalid_string', message: `Strings ${STRING_RULE}.` },
  ]);
}

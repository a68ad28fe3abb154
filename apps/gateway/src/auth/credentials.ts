import { ApiError } from '@sbc/errors';
import { readSessionCookie } from './console-cookie';

export type CredentialKind = 'key' | 'session' | 'device';

const PREFIXES: Record<string, CredentialKind> = { sbc: 'key', sbs: 'session', sbd: 'device' };

// Every credential we issue is `<prefix>_` plus 20 to 124 characters of this alphabet; anything else is
// refused before any lookup.
const CREDENTIAL = /^(sbc|sbs|sbd)_[A-Za-z0-9_-]{20,124}$/;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export interface Credential {
  kind: CredentialKind;
  secret: string;
  /** `cookie` for the console's session cookie, which only ever carries a session (sbs_…). */
  via: 'header' | 'cookie';
}

/**
 * The credential a request presents: `Authorization: Bearer <secret>` or, as messages-dialect clients send
 * it, `x-api-key: <secret>`; without either, the console's session cookie. Missing, malformed and unknown
 * credentials are all 401 `unauthorized`.
 */
export function readCredential(headers: {
  authorization?: string;
  'x-api-key'?: string | string[];
  cookie?: string;
}): Credential {
  const authorization = headers.authorization;
  const apiKey = headers['x-api-key'];
  let secret: string | undefined;
  if (authorization === undefined && apiKey === undefined) {
    const fromCookie = readSessionCookie(headers.cookie);
    // Only a session rides in the cookie: a key or device token planted there is never read.
    if (fromCookie !== undefined && fromCookie.startsWith('sbs_') && CREDENTIAL.test(fromCookie))
      return { kind: 'session', secret: fromCookie, via: 'cookie' };
  }
  if (authorization !== undefined) {
    secret = BEARER.exec(authorization)?.[1];
    if (!secret) throw new ApiError('unauthorized', 'The Authorization header must be "Bearer <key>".');
  } else if (typeof apiKey === 'string') {
    secret = apiKey.trim();
  } else if (apiKey !== undefined) {
    throw new ApiError('unauthorized', 'Send one x-api-key header.');
  }
  if (!secret)
    throw new ApiError('unauthorized', 'A caller key is required: send "Authorization: Bearer sbc_…" or "x-api-key".');
  const match = CREDENTIAL.exec(secret);
  if (!match) throw new ApiError('unauthorized', 'The credential is malformed.');
  return { kind: PREFIXES[match[1]!]!, secret, via: 'header' };
}

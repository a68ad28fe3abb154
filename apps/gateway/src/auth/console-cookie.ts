import type { IncomingHttpHeaders } from 'node:http';

/**
 * The console's session cookie. It holds a session token (`sbs_…`), is `HttpOnly` so page scripts never see
 * it, `SameSite=Strict` so other sites' pages never send it, and `Secure` when the edge is served over https.
 */
const SESSION_COOKIE = 'sbc_session';
/**
 * Beside it, a cookie page scripts may read that holds no secret, only that this browser signed in here: the
 * console asks who is signed in only when it is there, so a signed-out visit makes no refused request (which
 * browsers log as an error).
 */
const SIGNED_IN_COOKIE = 'sbc_signed_in';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function attributes(secure: boolean): string {
  return `Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

const hintAttributes = (secure: boolean) => `Path=/; SameSite=Strict${secure ? '; Secure' : ''}`;

/** `Set-Cookie` headers for a fresh session, kept by the browser until the session itself expires. */
export function sessionCookies(token: string, expiresAt: Date, now: Date, secure: boolean): string[] {
  const maxAgeS = Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
  return [
    `${SESSION_COOKIE}=${token}; Max-Age=${maxAgeS}; ${attributes(secure)}`,
    `${SIGNED_IN_COOKIE}=1; Max-Age=${maxAgeS}; ${hintAttributes(secure)}`,
  ];
}

/** `Set-Cookie` headers that make the browser drop the session cookie and its hint. */
export function clearedSessionCookies(secure: boolean): string[] {
  return [
    `${SESSION_COOKIE}=; Max-Age=0; ${attributes(secure)}`,
    `${SIGNED_IN_COOKIE}=; Max-Age=0; ${hintAttributes(secure)}`,
  ];
}

/** The session cookie's value from a `Cookie` header, if the request carries exactly one. */
export function readSessionCookie(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  const values = cookieHeader
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${SESSION_COOKIE}=`))
    .map((pair) => pair.slice(SESSION_COOKIE.length + 1));
  // Two cookies of this name (one planted by a sibling host) are ambiguous: neither is trusted.
  return values.length === 1 ? values[0] : undefined;
}

export function isSafeMethod(method: string | undefined): boolean {
  return SAFE_METHODS.has((method ?? 'POST').toUpperCase());
}

/**
 * True when a browser says the request comes from a page of this very origin: `Sec-Fetch-Site: same-origin`
 * where the browser sends it, else an `Origin` whose host is the one the request was sent to. A request that
 * says neither is not taken as same-origin: cookie-authenticated writes come from the console, in a browser.
 */
export function isSameOriginRequest(headers: IncomingHttpHeaders): boolean {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin';
  const origin = headers.origin;
  const host = headers.host;
  if (typeof origin !== 'string' || !host || origin === 'null') return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

import {
  clearedSessionCookies,
  isSafeMethod,
  isSameOriginRequest,
  readSessionCookie,
  sessionCookies,
} from './console-cookie';

describe('the console session cookie', () => {
  it('is HttpOnly and SameSite=Strict, Secure only on https, and lives as long as the session', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const [plain] = sessionCookies('sbs_token', new Date('2026-01-31T00:00:00Z'), now, false);
    expect(plain).toBe('sbc_session=sbs_token; Max-Age=2592000; Path=/; HttpOnly; SameSite=Strict');
    expect(sessionCookies('sbs_token', new Date('2026-01-31T00:00:00Z'), now, true)[0]).toMatch(/; Secure$/);
    expect(clearedSessionCookies(false)[0]).toBe('sbc_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict');
  });

  it('comes with a readable signed-in hint that holds no secret and goes when the session cookie goes', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const [, hint] = sessionCookies('sbs_token', new Date('2026-01-31T00:00:00Z'), now, false);
    expect(hint).toBe('sbc_signed_in=1; Max-Age=2592000; Path=/; SameSite=Strict');
    expect(hint).not.toContain('sbs_token');
    expect(clearedSessionCookies(true)[1]).toBe('sbc_signed_in=; Max-Age=0; Path=/; SameSite=Strict; Secure');
  });

  it('is read only when exactly one cookie of its name is sent', () => {
    expect(readSessionCookie('a=1; sbc_session=sbs_x ;b=2')).toBe('sbs_x');
    expect(readSessionCookie('sbc_session=sbs_x; sbc_session=sbs_y')).toBeUndefined();
    expect(readSessionCookie('xsbc_session=sbs_x')).toBeUndefined();
    expect(readSessionCookie(undefined)).toBeUndefined();
  });
});

describe('telling same-origin requests from cross-site ones', () => {
  it('trusts Sec-Fetch-Site when the browser sends it', () => {
    expect(isSameOriginRequest({ 'sec-fetch-site': 'same-origin', host: 'gw.test' })).toBe(true);
    expect(isSameOriginRequest({ 'sec-fetch-site': 'same-site', origin: 'https://gw.test', host: 'gw.test' })).toBe(
      false,
    );
    expect(isSameOriginRequest({ 'sec-fetch-site': 'cross-site', host: 'gw.test' })).toBe(false);
  });

  it('else compares Origin with the host the request was sent to', () => {
    expect(isSameOriginRequest({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080' })).toBe(true);
    expect(isSameOriginRequest({ origin: 'https://evil.test', host: 'gw.test' })).toBe(false);
    expect(isSameOriginRequest({ origin: 'null', host: 'gw.test' })).toBe(false);
    expect(isSameOriginRequest({ host: 'gw.test' })).toBe(false);
  });

  it('counts GET, HEAD and OPTIONS as reads and everything else as a write', () => {
    expect(['GET', 'head', 'OPTIONS'].every(isSafeMethod)).toBe(true);
    expect(['POST', 'PUT', 'PATCH', 'DELETE'].some(isSafeMethod)).toBe(false);
  });
});

import { startStack, type AccountSurfaceStack } from '../support/stack';

const PASSWORD = 'correct horse battery staple';

/** The stack's edge is at BASE_URL https://gw.test, so its cookie is Secure. */
describe('the console session cookie (POST/GET /v1/auth/console/session)', () => {
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    stack = await startStack({
      label: 'console_session',
      accountEnv: { SBC_SIGNUP_ENABLED: 'true' },
      edgeEnv: { AUTH_CACHE_FRESH_MS: '600000' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  let counter = 0;
  const host = () => new URL(stack.edge.url).host;
  const sameOrigin = () => ({ 'sec-fetch-site': 'same-origin', origin: stack.edge.url });

  /** A signed-up person signed in through the console route; returns the cookie pair the browser would send. */
  async function signedIn(): Promise<{
    cookie: string;
    setCookie: string;
    /** The page-readable signed-in hint set beside the session cookie. */
    hint: string;
    body: Record<string, unknown>;
    email: string;
  }> {
    const email = `console${++counter}.${Date.now()}@example.test`;
    expect((await stack.api('POST', '/v1/auth/signup', { body: { email, password: PASSWORD } })).status).toBe(201);
    const answer = await stack.api('POST', '/v1/auth/console/session', {
      body: { email, password: PASSWORD },
      headers: sameOrigin(),
    });
    expect(answer.status).toBe(201);
    const cookies = answer.headers.getSetCookie();
    const setCookie = cookies.find((one) => one.startsWith('sbc_session=')) ?? '';
    const hint = cookies.find((one) => one.startsWith('sbc_signed_in=')) ?? '';
    return { cookie: setCookie.split(';')[0]!, setCookie, hint, body: answer.body, email };
  }

  const withCookie = (cookie: string, headers: Record<string, string> = {}) => ({ headers: { cookie, ...headers } });

  it(
    'sets the session in an HttpOnly, SameSite=Strict, ' + 'Secure cookie and never shows the token to the page',
    async () => {
      const { setCookie, hint, body, email } = await signedIn();
      expect(setCookie).toMatch(
        /^sbc_session=sbs_[A-Za-z0-9_-]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
      );
      // Beside it, a hint the page may read that it signed in here, holding no secret, for as long.
      const maxAge = /Max-Age=(\d+)/.exec(setCookie)?.[1];
      expect(hint).toBe(`sbc_signed_in=1; Max-Age=${maxAge}; Path=/; SameSite=Strict; Secure`);
      expect(body).toMatchObject({ object: 'console_session', user: { email } });
      expect(JSON.stringify(body)).not.toMatch(/sbs_/);
    },
  );

  it('the cookie reads any route and says who is signed in', async () => {
    const { cookie, body } = await signedIn();
    expect((await stack.api('GET', '/v1/keys', withCookie(cookie))).status).toBe(200);
    expect(await stack.api('GET', '/v1/auth/console/session', withCookie(cookie))).toMatchObject({
      status: 200,
      body: { user: { id: (body.user as { id: string }).id }, operator: false },
    });
    expect((await stack.api('GET', '/v1/auth/console/session')).status).toBe(401);
  });

  it('a write signed in by the cookie passes from the same origin (Sec-Fetch-Site, or a matching Origin)', async () => {
    const { cookie } = await signedIn();
    expect(
      (
        await stack.api('POST', '/v1/keys', {
          body: { name: 'from the console' },
          ...withCookie(cookie, { 'sec-fetch-site': 'same-origin' }),
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await stack.api('POST', '/v1/keys', {
          body: { name: 'older browser' },
          ...withCookie(cookie, { origin: `http://${host()}` }),
        })
      ).status,
    ).toBe(201);
  });

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' }],
    ['Sec-Fetch-Site: same-site (a sibling host)', { 'sec-fetch-site': 'same-site', origin: 'https://apps.gw.test' }],
    ['another Origin', { origin: 'https://evil.test' }],
    ['no Origin and no Sec-Fetch-Site', {}],
  ])(
    'a cookie write marked %s is 403 in the shared envelope and changes nothing',
    async (_label, headers: Record<string, string>) => {
      const { cookie } = await signedIn();
      const refused = await stack.api('POST', '/v1/keys', { body: { name: 'forged' }, ...withCookie(cookie, headers) });
      expect(refused).toMatchObject({
        status: 403,
        body: {
          error: 'insufficient_scope',
          message: expect.stringMatching(/same-origin/),
          request_id: expect.any(String),
        },
      });
      const listed = await stack.api('GET', '/v1/keys', withCookie(cookie));
      expect(listed.body.data).toEqual([]);
      // Sign-out is a write too: a forged one does not end the session.
      expect((await stack.api('DELETE', '/v1/auth/sessions/current', withCookie(cookie, headers))).status).toBe(403);
      expect((await stack.api('GET', '/v1/keys', withCookie(cookie))).status).toBe(200);
    },
  );

  it('a model call made with the cookie from another site is 403 as well', async () => {
    const { cookie } = await signedIn();
    const res = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify({ model: 'house', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(403);
  });

  it('a cross-site page cannot sign a visitor in (login CSRF): 403 and no cookie', async () => {
    const email = `csrf${Date.now()}@example.test`;
    await stack.api('POST', '/v1/auth/signup', { body: { email, password: PASSWORD } });
    const answer = await stack.api('POST', '/v1/auth/console/session', {
      body: { email, password: PASSWORD },
      headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' },
    });
    expect(answer.status).toBe(403);
    expect(answer.headers.get('set-cookie')).toBeNull();
  });

  it('a wrong password is the same 401 as on the session route, and sets no cookie', async () => {
    const { email } = await signedIn();
    const answer = await stack.api('POST', '/v1/auth/console/session', {
      body: { email, password: 'not the password' },
      headers: sameOrigin(),
    });
    expect(answer).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(answer.headers.get('set-cookie')).toBeNull();
  });

  it('signing out through the cookie ends the session and clears the cookie', async () => {
    const { cookie } = await signedIn();
    const ended = await stack.api('DELETE', '/v1/auth/sessions/current', withCookie(cookie, sameOrigin()));
    expect(ended.status).toBe(204);
    expect(ended.headers.getSetCookie()).toEqual([
      'sbc_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict; Secure',
      'sbc_signed_in=; Max-Age=0; Path=/; SameSite=Strict; Secure',
    ]);
    expect((await stack.api('GET', '/v1/keys', withCookie(cookie))).status).toBe(401);
  });

  it('API keys work as before, and a header credential wins over the cookie', async () => {
    const { cookie } = await signedIn();
    const key = await stack.seedKey({ scopes: ['keys:read'] });
    const whoami = await stack.api('GET', '/v1/keys/whoami', { key: key.secret, ...withCookie(cookie) });
    expect(whoami).toMatchObject({ status: 200, body: { id: key.id } });
    // A key's writes need no Origin: it is not the cookie.
    expect((await stack.api('POST', '/v1/keys', { key: key.secret, body: { name: 'no' } })).status).toBe(403);
    const writer = await stack.seedKey();
    expect(
      (
        await stack.api('POST', '/v1/keys', {
          key: writer.secret,
          body: { name: 'yes' },
          ...withCookie(cookie, { 'sec-fetch-site': 'cross-site' }),
        })
      ).status,
    ).toBe(201);
  });
});

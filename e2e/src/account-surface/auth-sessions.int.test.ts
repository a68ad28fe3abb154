import { newId } from '@sbc/ids';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

const PASSWORD = 'correct horse battery staple';

describe(
  'users and sessions with sign-up enabled (POST /v1/auth/signup, POST /v1/auth/sessions, DELETE ' +
    '/v1/auth/sessions/current)',
  () => {
    let signupStack: AccountSurfaceStack;
    // The shared stack keeps sign-up at its default (off); this one turns it on, as embedded mode does.
    beforeAll(async () => {
      signupStack = await startStack({
        label: 'auth_sessions',
        accountEnv: { SBC_SIGNUP_ENABLED: 'true' },
        edgeEnv: { AUTH_CACHE_FRESH_MS: '600000' },
      });
    });
    afterAll(async () => {
      await signupStack?.stop();
    });
    const api: AccountSurfaceStack['api'] = (...args) => signupStack.api(...args);

    let counter = 0;
    const freshEmail = () => `person${++counter}.${Date.now()}@example.test`;
    const signUp = (body: Record<string, unknown>) => api('POST', '/v1/auth/signup', { body });
    const signIn = (body: Record<string, unknown>) => api('POST', '/v1/auth/sessions', { body });

    it(
      'round trip: sign up, sign in, call a scoped route ' + 'with the session, sign out, and the session is 401',
      async () => {
        const email = freshEmail();
        const created = await signUp({ email: email.toUpperCase(), password: PASSWORD });
        expect(created.status).toBe(201);
        expect(created.body.user).toEqual({
          id: expect.stringMatching(/^usr_/),
          object: 'user',
          email,
          created_at: expect.any(String),
        });
        expect(JSON.stringify(created.body)).not.toContain(PASSWORD);

        const session = await signIn({ email, password: PASSWORD });
        expect(session.status).toBe(201);
        expect(session.body).toMatchObject({
          token: expect.stringMatching(/^sbs_/),
          user: { id: created.body.user.id, email },
        });
        const days = (Date.parse(session.body.expires_at) - Date.now()) / 86_400_000;
        expect(days).toBeGreaterThan(29.9);
        expect(days).toBeLessThanOrEqual(30);
        const token: string = session.body.token;

        // A session passes scoped routes unnarrowed: it mints a key and lists it.
        const minted = await api('POST', '/v1/keys', {
          key: token,
          body: { name: 'from my session', preset: 'full_access' },
        });
        expect(minted.status).toBe(201);
        const listed = await api('GET', '/v1/keys', { key: token });
        expect(listed.body.data.map((key: { id: string }) => key.id)).toEqual([minted.body.id]);

        const ended = await api('DELETE', '/v1/auth/sessions/current', { key: token });
        expect(ended.status).toBe(204);
        expect((await api('GET', '/v1/keys', { key: token })).status).toBe(401);
        // Signing out ends that session only: the key it minted keeps working.
        expect((await api('GET', '/v1/keys/whoami', { key: minted.body.key })).status).toBe(200);
      },
    );

    it('a wrong password and an unknown email are the same 401, with no hint which', async () => {
      const email = freshEmail();
      await signUp({ email, password: PASSWORD });
      const wrongPassword = await signIn({ email, password: `${PASSWORD}!` });
      const unknownEmail = await signIn({ email: freshEmail(), password: PASSWORD });
      expect(wrongPassword.status).toBe(401);
      expect(unknownEmail.status).toBe(401);
      expect(wrongPassword.body.message).toBe(unknownEmail.body.message);
      expect(wrongPassword.body.param).toBeUndefined();
      expect(unknownEmail.body.param).toBeUndefined();
    });

    it('a user without a password (the bootstrap owner kind) cannot sign in', async () => {
      await signupStack.account.database.prisma.user.create({
        data: { id: newId('usr'), email: 'nopassword@example.test' },
      });
      expect((await signIn({ email: 'nopassword@example.test', password: PASSWORD })).status).toBe(401);
    });

    it('refuses an email already in use, in any case, with 409', async () => {
      const email = freshEmail();
      expect((await signUp({ email, password: PASSWORD })).status).toBe(201);
      expect(await signUp({ email: email.toUpperCase(), password: 'another password' })).toMatchObject({
        status: 409,
        body: { error: 'conflict', param: 'email' },
      });
    });

    it.each([
      ['a short password', { email: 'a@example.test', password: 'short' }, 'password'],
      ['a long password', { email: 'a@example.test', password: 'x'.repeat(257) }, 'password'],
      ['a malformed email', { email: 'not-an-email', password: PASSWORD }, 'email'],
      ['an unknown field', { email: 'a@example.test', password: PASSWORD, admin: true }, ''],
    ])('sign-up refuses %s with 400, never echoing the password', async (_label, body, param) => {
      const answer = await signUp(body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('invalid_request');
      if (param) expect(answer.body.param).toBe(param);
      expect(JSON.stringify(answer.body)).not.toContain(String(body.password));
    });

    it('sign-in refuses a malformed body with 400', async () => {
      expect(await signIn({ email: 'a@example.test' })).toMatchObject({ status: 400, body: { param: 'password' } });
    });

    it('sign-out is 401 without a credential and 403 for a caller key, which is not a session', async () => {
      expect((await api('DELETE', '/v1/auth/sessions/current')).status).toBe(401);
      const email = freshEmail();
      await signUp({ email, password: PASSWORD });
      const token = (await signIn({ email, password: PASSWORD })).body.token;
      const key = (await api('POST', '/v1/keys', { key: token, body: { name: 'k', preset: 'full_access' } })).body.key;
      expect(await api('DELETE', '/v1/auth/sessions/current', { key })).toMatchObject({
        status: 403,
        body: { error: 'insufficient_scope' },
      });
      expect((await api('GET', '/v1/keys/whoami', { key })).status).toBe(200);
    });
  },
);

describe('sign-up is off by default', () => {
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    stack = await startStack({ label: 'auth_signup_off' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('POST /v1/auth/signup is 404 with a message saying so, and creates no user', async () => {
    const answer = await stack.api('POST', '/v1/auth/signup', {
      body: { email: 'someone@example.test', password: PASSWORD },
    });
    expect(answer).toMatchObject({
      status: 404,
      body: { error: 'not_found', message: expect.stringMatching(/sign-up is not enabled/i) },
    });
    expect(
      await stack.account.database.prisma.user.findUnique({ where: { email: 'someone@example.test' } }),
    ).toBeNull();
    expect((await stack.api('GET', '/v1/keys/whoami', { key: OWNER_KEY })).status).toBe(200);
  });
});

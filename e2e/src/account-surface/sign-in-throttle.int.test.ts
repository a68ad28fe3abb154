import { randomBytes } from 'node:crypto';
import { startStack, type AccountSurfaceStack } from '../support/stack';

/**
 * Routes reached without a key are throttled (README, "Abuse"): guessing passwords at POST /v1/auth/sessions
 * is refused with 429 after five failures from one address, without locking the owner out elsewhere, and
 * sign-ups per address are bounded. The edge trusts one proxy hop here, so the test can speak from several
 * addresses through `x-forwarded-for`.
 */
const PASSWORD = 'correct horse battery staple';
let stack: AccountSurfaceStack;

beforeAll(async () => {
  stack = await startStack({
    label: 'sign_in_throttle',
    accountEnv: { SBC_SIGNUP_ENABLED: 'true' },
    edgeEnv: { TRUSTED_PROXY_HOPS: '1' },
  });
});

afterAll(async () => {
  await stack?.stop();
});

// Throttle windows live in the shared store (Redis when the run has it) and outlive a run: each run speaks
// from addresses of its own.
const run = randomBytes(4).toString('hex');
const address = (n: number) => `2001:db8:${run.slice(0, 4)}:${run.slice(4)}::${n}`;
const from = (address: string) => ({ 'x-forwarded-for': address });
const signIn = (email: string, password: string, address: string) =>
  stack.api('POST', '/v1/auth/sessions', { body: { email, password }, headers: from(address) });

it(
  'wrong passwords from one address are refused with 429 and Retry-After after five, while the owner still signs in ' +
    'from elsewhere',
  async () => {
    const email = `guessed.${Date.now()}@example.test`;
    expect(
      (await stack.api('POST', '/v1/auth/signup', { body: { email, password: PASSWORD }, headers: from(address(1)) }))
        .status,
    ).toBe(201);

    for (let i = 0; i < 5; i++) expect((await signIn(email, `wrong ${i}`, address(2))).status).toBe(401);
    const refused = await signIn(email, PASSWORD, address(2));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'rate_limited', request_id: expect.any(String) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(JSON.stringify(refused.body)).not.toContain('token');

    // The right password from another address is not locked out by the guessing.
    const owner = await signIn(email, PASSWORD, address(1));
    expect(owner.status).toBe(201);
    expect(owner.body.token).toMatch(/^sbs_/);
  },
);

it('sign-ups from one address are refused with 429 past twenty an hour; another address is not', async () => {
  const stamp = Date.now();
  const signUp = (i: number, address: string) =>
    stack.api('POST', '/v1/auth/signup', {
      body: { email: `bulk${i}.${stamp}@example.test`, password: PASSWORD },
      headers: from(address),
    });
  for (let i = 0; i < 20; i++) expect((await signUp(i, address(3))).status).toBe(201);
  const refused = await signUp(20, address(3));
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({ error: 'rate_limited' });
  expect((await signUp(21, address(4))).status).toBe(201);
});

it(
  'a forged x-forwarded-for from the caller itself does ' + 'not reset the count: only the last hop is trusted',
  async () => {
    const email = `forged.${Date.now()}@example.test`;
    expect(
      (await stack.api('POST', '/v1/auth/signup', { body: { email, password: PASSWORD }, headers: from(address(5)) }))
        .status,
    ).toBe(201);
    for (let i = 0; i < 5; i++) expect((await signIn(email, 'wrong', `10.9.9.${i}, ${address(6)}`)).status).toBe(401);
    expect((await signIn(email, PASSWORD, `anything, ${address(6)}`)).status).toBe(429);
  },
);

import { createMemoryStore } from '@sbc/cache';
import { ApiError } from '@sbc/errors';
import { clientAddress, createSignInThrottle, THROTTLES } from './sign-in-throttle';

const wrongPassword = () => Promise.reject(new ApiError('unauthorized', 'Wrong e-mail or password.'));
const rightPassword = () => Promise.resolve('token');

describe('sign-in throttles', () => {
  let now = Date.parse('2026-11-25T12:00:00Z');
  const store = createMemoryStore({ now: () => now });
  const throttle = createSignInThrottle({ store });
  afterAll(() => store.close());

  it(
    'refuses an account and address with 429 and Retry-After ' +
      'after five failures, before asking the account service',
    async () => {
      for (let i = 0; i < THROTTLES.signInPerAccountAddress.limit; i++) {
        await expect(throttle.signIn('victim@example.test', '203.0.113.7', wrongPassword)).rejects.toMatchObject({
          code: 'unauthorized',
        });
      }
      let asked = false;
      const refused = await throttle
        .signIn('victim@example.test', '203.0.113.7', async () => {
          asked = true;
          return 'token';
        })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(Number((refused as ApiError).headers!['retry-after'])).toBeGreaterThan(0);
      expect(asked).toBe(false);
    },
  );

  it('does not lock the owner out from an address where they signed in before', async () => {
    await expect(throttle.signIn('owner@example.test', '198.51.100.1', rightPassword)).resolves.toBe('token');
    // 100 failures spread over many other addresses fill the account's window for new addresses.
    for (let i = 0; i < THROTTLES.signInPerAccountFromNewAddresses.limit; i++) {
      await throttle.signIn('owner@example.test', `192.0.2.${i}`, wrongPassword).catch(() => undefined);
    }
    await expect(throttle.signIn('owner@example.test', '192.0.2.250', rightPassword)).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await expect(throttle.signIn('owner@example.test', '198.51.100.1', rightPassword)).resolves.toBe('token');
  });

  it('counts only failures, and lets an address try again once its window has passed', async () => {
    for (let i = 0; i < 20; i++) await throttle.signIn('busy@example.test', '203.0.113.9', rightPassword);
    for (let i = 0; i < THROTTLES.signInPerAccountAddress.limit; i++)
      await throttle.signIn('late@example.test', '203.0.113.9', wrongPassword).catch(() => undefined);
    await expect(throttle.signIn('late@example.test', '203.0.113.9', rightPassword)).rejects.toMatchObject({
      code: 'rate_limited',
    });
    now += 2 * THROTTLES.signInPerAccountAddress.windowMs;
    await expect(throttle.signIn('late@example.test', '203.0.113.9', rightPassword)).resolves.toBe('token');
  });

  it('limits sign-ups and pairings per address', async () => {
    for (let i = 0; i < THROTTLES.signUpPerAddress.limit; i++) await throttle.signUp('203.0.113.20');
    await expect(throttle.signUp('203.0.113.20')).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(throttle.signUp('203.0.113.21')).resolves.toBeUndefined();
    for (let i = 0; i < THROTTLES.pairingPerAddress.limit; i++) await throttle.pairing('203.0.113.20');
    await expect(throttle.pairing('203.0.113.20')).rejects.toMatchObject({ code: 'rate_limited' });
  });
});

describe('the caller address the throttles count by', () => {
  const req = (peer: string, forwarded?: string) => ({
    socket: { remoteAddress: peer },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  });

  it('is the socket peer unless proxies are trusted, so a forged x-forwarded-for changes nothing', () => {
    expect(clientAddress(req('10.0.0.5', '1.2.3.4'), 0)).toBe('10.0.0.5');
  });

  it('is the entry the trusted proxy appended, not what the caller claimed before it', () => {
    expect(clientAddress(req('10.0.0.5', 'forged, 198.51.100.9'), 1)).toBe('198.51.100.9');
    expect(clientAddress(req('10.0.0.5', '198.51.100.9, 10.0.0.2'), 2)).toBe('198.51.100.9');
    expect(clientAddress(req('10.0.0.5'), 1)).toBe('10.0.0.5');
  });
});

describe('loopback callers', () => {
  it('are counted per account only, so an undeclared local proxy does not throttle every caller together', async () => {
    const store = createMemoryStore();
    const throttle = createSignInThrottle({ store });
    for (let i = 0; i < 3 * THROTTLES.signUpPerAddress.limit; i++) await throttle.signUp('127.0.0.1');
    for (let i = 0; i < THROTTLES.signInPerAddress.limit; i++)
      await throttle.signIn(`user${i}@example.test`, '::1', wrongPassword).catch(() => undefined);
    await expect(throttle.signIn('another@example.test', '::1', rightPassword)).resolves.toBe('token');
    for (let i = 0; i < THROTTLES.signInPerAccountAddress.limit; i++)
      await throttle.signIn('one@example.test', '::1', wrongPassword).catch(() => undefined);
    await expect(throttle.signIn('one@example.test', '::1', rightPassword)).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await store.close();
  });
});

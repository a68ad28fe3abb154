import { formatUserCode, newUserCode, normaliseUserCode, pollOutcome, type GrantState } from './pairing';

describe('user codes', () => {
  it('are eight consonants from the RFC 8628 alphabet, shown as XXXX-XXXX', () => {
    for (let i = 0; i < 200; i++) {
      const code = newUserCode();
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
      expect(formatUserCode(code)).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    }
  });

  it('are not drawn the same twice in a row (random, not a counter)', () => {
    const codes = new Set(Array.from({ length: 1000 }, newUserCode));
    expect(codes.size).toBeGreaterThan(995);
  });

  it('are accepted typed with or without the dash, in any case, with stray spaces', () => {
    for (const typed of ['BCDF-GHJK', 'bcdfghjk', 'bcdf-GHJK', ' bcdf ghjk ', 'BC-DF-GH-JK']) {
      expect(normaliseUserCode(typed)).toBe('BCDFGHJK');
    }
  });

  it('are refused when they cannot be one (wrong length, vowels, digits)', () => {
    for (const typed of ['', 'BCDF-GHJ', 'BCDF-GHJKL', 'ABCD-EFGH', 'BCDF-GHJ1', 'BCDF_GHJK']) {
      expect(normaliseUserCode(typed)).toBeNull();
    }
  });
});

describe('a poll of the device', () => {
  const now = new Date('2026-09-23T12:00:00Z');
  const grant = (overrides: Partial<GrantState> = {}): GrantState => ({
    status: 'pending',
    expiresAt: new Date(now.getTime() + 60_000),
    lastPolledAt: null,
    intervalS: 5,
    ...overrides,
  });
  const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000);

  it('is authorization_pending while pending and polled no faster than the interval', () => {
    expect(pollOutcome(grant(), now)).toBe('authorization_pending');
    expect(pollOutcome(grant({ lastPolledAt: secondsAgo(5) }), now)).toBe('authorization_pending');
  });

  it('is slow_down when polled sooner than the interval after the last poll', () => {
    expect(pollOutcome(grant({ lastPolledAt: secondsAgo(4.9) }), now)).toBe('slow_down');
    expect(pollOutcome(grant({ lastPolledAt: secondsAgo(9), intervalS: 10 }), now)).toBe('slow_down');
  });

  it('hands an approved grant over however soon it is polled', () => {
    expect(pollOutcome(grant({ status: 'approved', lastPolledAt: secondsAgo(0) }), now)).toBe('issue');
  });

  it('is expired_token once the grant expired, approved or not', () => {
    expect(pollOutcome(grant({ expiresAt: now }), now)).toBe('expired_token');
    expect(pollOutcome(grant({ status: 'approved', expiresAt: secondsAgo(1) }), now)).toBe('expired_token');
  });

  it('is access_denied after a denial, even once expired', () => {
    expect(pollOutcome(grant({ status: 'denied' }), now)).toBe('access_denied');
    expect(pollOutcome(grant({ status: 'denied', expiresAt: secondsAgo(60) }), now)).toBe('access_denied');
  });

  it('is invalid_grant once the code was exchanged', () => {
    expect(pollOutcome(grant({ status: 'consumed' }), now)).toBe('invalid_grant');
  });
});

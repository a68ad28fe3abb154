import { randomBytes } from 'node:crypto';
import { ConfigError } from '@sbc/config';
import { loadAccountConfig } from './config';

describe('account configuration', () => {
  const key = randomBytes(32);

  it('reads UPSTREAM_SECRETS_KEY as 32 raw bytes', () => {
    const config = loadAccountConfig({ UPSTREAM_SECRETS_KEY: key.toString('base64') });
    expect(config.upstreamSecretsKey?.equals(key)).toBe(true);
  });

  it('runs without a secrets key on the embedded data directory (start keeps one beside the data)', () => {
    expect(loadAccountConfig({}).upstreamSecretsKey).toBeUndefined();
  });

  it('refuses a PostgreSQL DATABASE_URL without a secrets key, naming the variable and how to make one', () => {
    let error: unknown;
    try {
      loadAccountConfig({ DATABASE_URL: 'postgres://db/account' });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.variable)).toEqual(['UPSTREAM_SECRETS_KEY']);
    expect((error as ConfigError).message).toMatch(
      /UPSTREAM_SECRETS_KEY: required when DATABASE_URL is set.*openssl rand -base64 32/,
    );
  });

  it('accepts a PostgreSQL DATABASE_URL with a secrets key', () => {
    const config = loadAccountConfig({
      DATABASE_URL: 'postgres://db/account',
      UPSTREAM_SECRETS_KEY: key.toString('base64'),
    });
    expect(config.databaseUrl).toBe('postgres://db/account');
  });

  it('refuses a secrets key that is not 32 bytes of base64, without echoing it', () => {
    const short = randomBytes(16).toString('base64');
    let error: unknown;
    try {
      loadAccountConfig({ UPSTREAM_SECRETS_KEY: short });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]?.variable).toBe('UPSTREAM_SECRETS_KEY');
    expect((error as ConfigError).message).not.toContain(short);
  });

  it('keeps sign-up off unless SBC_SIGNUP_ENABLED turns it on', () => {
    expect(loadAccountConfig({}).signupEnabled).toBe(false);
    expect(loadAccountConfig({ SBC_SIGNUP_ENABLED: 'true' }).signupEnabled).toBe(true);
  });

  it(
    'allows private upstream addresses to operators unless EGRESS_PRIVATE (or the old EGRESS_DENY_PRIVATE=true) says ' +
      'otherwise',
    () => {
      expect(loadAccountConfig({}).egress.private).toBe('operators');
      expect(loadAccountConfig({ EGRESS_DENY_PRIVATE: 'true' }).egress.private).toBe('none');
      expect(loadAccountConfig({ EGRESS_DENY_PRIVATE: 'false' }).egress.private).toBe('operators');
      expect(loadAccountConfig({ EGRESS_PRIVATE: 'everyone' }).egress.private).toBe('everyone');
      expect(() => loadAccountConfig({ EGRESS_PRIVATE: 'all' })).toThrow(/EGRESS_PRIVATE/);
    },
  );

  it('accepts the documented default owner@localhost when it is written out, and refuses a malformed address', () => {
    expect(loadAccountConfig({ SBC_BOOTSTRAP_EMAIL: 'owner@localhost' }).bootstrapEmail).toBe('owner@localhost');
    expect(() => loadAccountConfig({ SBC_BOOTSTRAP_EMAIL: 'not an address' })).toThrow(/SBC_BOOTSTRAP_EMAIL/);
  });
});

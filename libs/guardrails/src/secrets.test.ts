import { redactSecrets } from './secrets';

describe('redactSecrets', () => {
  it.each([
    ['a caller key', 'key sbc_live_0123456789abcdef here', 'key [redacted] here'],
    ['a session token', 'sbs_0123456789abcdefghij', '[redacted]'],
    ['a device token', 'token sbd_abcdefghijkl', 'token [redacted]'],
    ['a webhook secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '[redacted]'],
    ['an OpenAI project key', 'use sk-proj-AbCdEf0123456789_xyz now', 'use [redacted] now'],
    ['an Anthropic key', 'sk-ant-api03-abcdefghijklmnop', '[redacted]'],
    ['an AWS access key id', 'AKIAIOSFODNN7EXAMPLE', '[redacted]'],
    ['a Google API key', 'AIzaSyA-1234567890abcdefghijklmnopqrstu', '[redacted]'],
    ['a GitHub token', 'ghp_0123456789abcdefghijABCDEFGHIJ', '[redacted]'],
    ['a Slack token', 'xoxb-123456789012-abcdefghij', '[redacted]'],
    ['a bearer token', 'Authorization: Bearer abc.def-ghi_jkl', 'Authorization: Bearer [redacted]'],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl', '[redacted]'],
    ['an assignment', 'api_key=abcd1234efgh and password: "hunter22"', 'api_key=[redacted] and password: "[redacted]"'],
    ['a JSON field', '{"client_secret": "s3cr3tvalue"}', '{"client_secret": "[redacted]"}'],
  ])('replaces %s', (_kind, text, redacted) => {
    expect(redactSecrets(text)).toBe(redacted);
  });

  it('replaces a PEM private key whole', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----';
    expect(redactSecrets(`key:\n${pem}\ndone`)).toBe('key:\n[redacted]\ndone');
  });

  it('leaves ordinary text alone', () => {
    const text = 'Ask the task-runner for a token count; sk-8 is a size, and my password is long.';
    expect(redactSecrets(text)).toBe(text);
  });
});

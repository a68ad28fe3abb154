import { ApiError } from '@sbc/errors';
import { readCredential } from './credentials';

const KEY = 'sbc_0123456789abcdefghijKLMNOP';

function refusal(headers: Parameters<typeof readCredential>[0]): ApiError {
  try {
    readCredential(headers);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('reading the credential of a request', () => {
  it('takes a caller key from Authorization: Bearer, case-insensitively and with spaces', () => {
    expect(readCredential({ authorization: `Bearer ${KEY}` })).toEqual({ kind: 'key', secret: KEY, via: 'header' });
    expect(readCredential({ authorization: `bearer   ${KEY} ` })).toEqual({ kind: 'key', secret: KEY, via: 'header' });
  });

  it('takes the key from x-api-key when there is no Authorization header', () => {
    expect(readCredential({ 'x-api-key': KEY })).toEqual({ kind: 'key', secret: KEY, via: 'header' });
  });

  it('prefers Authorization when both are sent', () => {
    expect(
      readCredential({ authorization: `Bearer ${KEY}`, 'x-api-key': 'sbc_other_key_000000000000000' }).secret,
    ).toBe(KEY);
  });

  it('tells sessions and device tokens apart by prefix', () => {
    expect(readCredential({ authorization: 'Bearer sbs_0123456789abcdefghijKLMNOP' }).kind).toBe('session');
    expect(readCredential({ authorization: 'Bearer sbd_0123456789abcdefghijKLMNOP' }).kind).toBe('device');
  });

  it.each([
    ['no credential at all', {}],
    ['an empty Authorization header', { authorization: '' }],
    ['Bearer without a token', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: `Basic ${KEY}` }],
    ['two tokens', { authorization: `Bearer ${KEY} ${KEY}` }],
    ['a foreign key format', { authorization: 'Bearer sk-proj-0123456789abcdefghij' }],
    ['a too-short secret', { authorization: 'Bearer sbc_abc' }],
    ['characters outside the alphabet', { authorization: 'Bearer sbc_0123456789abcdefghij$%^&' }],
    ['repeated x-api-key headers', { 'x-api-key': [KEY, KEY] }],
  ])('refuses %s with 401 unauthorized', (_label, headers) => {
    const error = refusal(headers as Parameters<typeof readCredential>[0]);
    expect(error.code).toBe('unauthorized');
    expect(error.status).toBe(401);
    expect(error.message).not.toContain(KEY);
  });

  const SESSION = 'sbs_0123456789abcdefghijKLMNOP';

  it('takes a session from the console cookie when no header names a credential', () => {
    expect(readCredential({ cookie: `theme=dark; sbc_session=${SESSION}` })).toEqual({
      kind: 'session',
      secret: SESSION,
      via: 'cookie',
    });
  });

  it('prefers a header credential to the cookie, so API keys work as before', () => {
    expect(readCredential({ authorization: `Bearer ${KEY}`, cookie: `sbc_session=${SESSION}` })).toEqual({
      kind: 'key',
      secret: KEY,
      via: 'header',
    });
  });

  it.each([
    ['a caller key', `sbc_session=${KEY}`],
    ['a device token', 'sbc_session=sbd_0123456789abcdefghijKLMNOP'],
    ['two session cookies', `sbc_session=${SESSION}; sbc_session=sbs_zzzzzzzzzzzzzzzzzzzzzzzz`],
    ['a malformed session', 'sbc_session=sbs_short'],
  ])('never reads %s from the cookie', (_label, cookie) => {
    expect(refusal({ cookie }).code).toBe('unauthorized');
  });
});

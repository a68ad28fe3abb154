import { auditSnapshot, MASKED } from './audit-snapshot';

describe('auditSnapshot', () => {
  it('keeps a key row readable and drops its hash', () => {
    const at = new Date('2026-11-27T10:00:00Z');
    expect(
      auditSnapshot({ id: 'key_1', keyHash: new Uint8Array([1, 2]), mask: 'sbc_abcd…wxyz', revokedAt: at, cap: 7n }),
    ).toEqual({ id: 'key_1', mask: 'sbc_abcd…wxyz', revoked_at: '2026-11-27T10:00:00.000Z', cap: '7' });
  });

  it('masks every field named as a secret and every header value, at any depth', () => {
    expect(
      auditSnapshot({
        apiKey: 'sk-live-1',
        hasApiKey: true,
        nested: { secret: 'whsec_x', password: null, headers: { 'x-api': 'v1' }, list: [{ token: 't' }] },
      }),
    ).toEqual({
      api_key: MASKED,
      has_api_key: true,
      nested: { secret: MASKED, password: null, headers: { 'x-api': MASKED }, list: [{ token: MASKED }] },
    });
  });
});

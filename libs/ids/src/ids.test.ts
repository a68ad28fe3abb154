import { hashSecret, hashSecretHex, maskSecret, newId, newSecret } from './ids';

describe('ids', () => {
  it('ids minted in order sort in order, even within one millisecond', () => {
    const ids = Array.from({ length: 50 }, () => newId('key', 1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
    expect(ids[0]).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('secrets carry their prefix and 32 base62 characters, and do not repeat', () => {
    const a = newSecret('sbc');
    expect(a).toMatch(/^sbc_[0-9A-Za-z]{32}$/);
    expect(newSecret('sbc')).not.toBe(a);
  });

  it('a mask shows the prefix, four characters, an ellipsis and the last four', () => {
    expect(maskSecret('sbc_ABCDefghijklmnopqrstuvWXYZ')).toBe('sbc_ABCD…WXYZ');
  });

  it('hashes are SHA-256 of the secret', () => {
    expect(hashSecret('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecretHex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    // The UTF-8 bytes are hashed, as the stored hashes were made.
    expect(hashSecretHex('clé')).toBe('51cbcf30514d0802eb5c60a018f384ea3fb9b69307c554ee63ecb43177594de4');
    expect(hashSecret('clé').toString('hex')).toBe('51cbcf30514d0802eb5c60a018f384ea3fb9b69307c554ee63ecb43177594de4');
  });
});

import { hashPassword, UNMATCHABLE_PASSWORD_HASH, verifyPassword } from './passwords';

describe('password hashes', () => {
  it('verify the password they were made from and no other', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(await verifyPassword(stored, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(stored, 'correct horse batterY')).toBe(false);
  });

  it('salt each hash, so one password never hashes the same twice and the password is not in it', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toContain('same password');
  });

  it('the unmatchable hash and unreadable stored values never verify', async () => {
    expect(await verifyPassword(UNMATCHABLE_PASSWORD_HASH, 'anything at all')).toBe(false);
    expect(await verifyPassword('bcrypt$whatever', 'anything at all')).toBe(false);
    expect(await verifyPassword('', 'anything at all')).toBe(false);
    expect(await verifyPassword('scrypt$3$8$1$c2FsdA==$aGFzaA==', 'anything at all')).toBe(false);
  });
});

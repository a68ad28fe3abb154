import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashes: scrypt with a per-user random salt, stored as `scrypt$N$r$p$<salt>$<hash>` (base64) so
 * the cost can be raised later without breaking stored hashes.
 */

const COST = { N: 2 ** 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const HASH_BYTES = 32;
// scrypt needs 128 * N * r bytes; Node's default ceiling (32 MiB) is exactly that, which it refuses.
const MAX_MEMORY = 64 * 1024 * 1024;

function derive(
  password: string,
  salt: Buffer,
  cost: { N: number; r: number; p: number },
  length: number,
): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: MAX_MEMORY };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, COST, HASH_BYTES);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** Compares in constant time; a stored value this code cannot read never verifies. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  if (expected.length === 0) return false;
  const actual = await derive(
    password,
    Buffer.from(salt, 'base64'),
    { N: Number(n), r: Number(r), p: Number(p) },
    expected.length,
  ).catch(() => undefined);
  return actual !== undefined && timingSafeEqual(actual, expected);
}

/**
 * A well-formed hash no password matches (random salt and digest). Checking an unknown email's password
 * against it costs one scrypt, as a known email's does, so the answer's timing does not tell them apart.
 */
export const UNMATCHABLE_PASSWORD_HASH = [
  'scrypt',
  COST.N,
  COST.r,
  COST.p,
  randomBytes(SALT_BYTES).toString('base64'),
  randomBytes(HASH_BYTES).toString('base64'),
].join('$');

import { hash, randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Resource id prefixes (CONTRACTS "Identity"). */
export type IdPrefix =
  'usr' | 'key' | 'org' | 'dev' | 'prj' | 'run' | 'xbj' | 'req' | 'evt' | 'whk' | 'msg' | 'ups' | 'aud' | 'grd' | 'mcp';

// Random bytes are drawn from the CSPRNG a pool at a time: one syscall per 4 KiB instead of one per id,
// which matters on the edge where every request gets an id.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function pooledRandom(): number {
  if (poolOffset + 4 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const value = pool.readUInt32BE(poolOffset);
  poolOffset += 4;
  return value / 0x1_0000_0000;
}

// Monotonic within a millisecond, so ids minted in one burst still sort in creation order.
const nextUlid = monotonicFactory(pooledRandom);

/** `<prefix>_<ULID>`: unique, and sortable by creation time as plain strings. */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${nextUlid(now)}`;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A credential secret: prefix + 32 base62 characters (~190 bits from the CSPRNG). Rejection sampling keeps
 * every character equally likely.
 */
export function newSecret(prefix: 'sbc' | 'sbs' | 'sbd', length = 32): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return `${prefix}_${out}`;
}

/** The form a secret is stored and looked up by. */
export function hashSecret(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/** hashSecret as hex, for a lookup key; the one-shot hash is several times cheaper than createHash on the edge. */
export function hashSecretHex(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** The display form of a key: prefix, 4 characters, an ellipsis, the last 4 (`sbc_AbCd…WxYz`). */
export function maskSecret(secret: string): string {
  const cut = secret.indexOf('_') + 1;
  return `${secret.slice(0, cut + 4)}…${secret.slice(-4)}`;
}

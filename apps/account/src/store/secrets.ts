import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Secrets at rest (upstream API keys and header values): AES-256-GCM with a 32-byte key.
 *
 * Stored form: "v1" (2 bytes) + IV (12) + auth tag (16) + ciphertext. The version comes first so a later key
 * rotation or algorithm can be told apart row by row. The caller's context string (which row and column the
 * secret belongs to) is bound as additional authenticated data, so a ciphertext copied into another account's
 * row does not decrypt there.
 */
export interface SecretCipher {
  encrypt(plaintext: string, context: string): Uint8Array<ArrayBuffer>;
  /** Throws SecretDecryptError when the ciphertext was altered, belongs elsewhere, or was sealed with another key. */
  decrypt(ciphertext: Uint8Array, context: string): string;
}

const SECRETS_KEY_BYTES = 32;
const VERSION = Buffer.from('v1', 'ascii');
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = VERSION.length + IV_BYTES + TAG_BYTES;

/** Never carries the plaintext or key material, so it is safe to log. */
export class SecretDecryptError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`cannot decrypt stored secret: ${reason}`, options);
    this.name = 'SecretDecryptError';
  }
}

export function createSecretCipher(key: Uint8Array): SecretCipher {
  if (key.length !== SECRETS_KEY_BYTES)
    throw new Error(`the secrets key must be ${SECRETS_KEY_BYTES} bytes, got ${key.length}`);
  const secretKey = Buffer.from(key);
  return {
    encrypt(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secretKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const sealed = Buffer.concat([VERSION, iv, cipher.getAuthTag(), data]);
      // A plain Uint8Array (not a pooled Buffer view) is what the database driver stores as bytea.
      return new Uint8Array(sealed);
    },
    decrypt(ciphertext, context) {
      const sealed = Buffer.from(ciphertext);
      if (sealed.length < HEADER_BYTES) throw new SecretDecryptError('too short');
      if (!sealed.subarray(0, VERSION.length).equals(VERSION)) throw new SecretDecryptError('unknown format version');
      const iv = sealed.subarray(VERSION.length, VERSION.length + IV_BYTES);
      const tag = sealed.subarray(VERSION.length + IV_BYTES, HEADER_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', secretKey, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      try {
        return Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]).toString('utf8');
      } catch (error) {
        // GCM says only "unable to authenticate": a tampered byte, the wrong row, or the wrong key look alike.
        throw new SecretDecryptError('authentication failed (tampered, moved, or sealed with another key)', {
          cause: error,
        });
      }
    },
  };
}

/** Decodes a configured key: standard or URL-safe base64, padded or not, of exactly 32 bytes. */
export function decodeSecretsKey(encoded: string): Buffer | undefined {
  const trimmed = encoded.trim();
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return undefined;
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === SECRETS_KEY_BYTES ? key : undefined;
}

export const SECRETS_KEY_FILE = 'secrets.key';

/**
 * The key for the embedded default, which runs with no configuration: the one an earlier start saved under
 * the data directory, else a new one saved there with mode 0600. Deleting the data directory starts afresh,
 * key and ciphertexts together. `memory://` keeps nothing on disk, so its key lives as long as the process.
 */
export async function loadOrCreateSecretsKey(
  dataDir: string,
): Promise<{ key: Buffer; file?: string; created: boolean }> {
  if (dataDir === 'memory://') return { key: randomBytes(SECRETS_KEY_BYTES), created: true };
  const file = path.join(dataDir, SECRETS_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing) return { key: existing, file, created: false };
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(SECRETS_KEY_BYTES);
  try {
    // 'wx' fails if another start wrote the file in between, instead of replacing the key its rows use.
    await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const raced = await readKeyFile(file);
    if (!raced)
      throw new Error(`${file}: could not read the upstream secrets key another start wrote`, { cause: error });
    return { key: raced, file, created: false };
  }
  return { key, file, created: true };
}

async function readKeyFile(file: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const key = decodeSecretsKey(text);
  // A damaged key file must stop the start: a fresh key would silently orphan every stored secret.
  if (!key)
    throw new Error(
      `${file}: not a base64 ${SECRETS_KEY_BYTES}-byte key; restore it, or delete the data directory to start afresh`,
    );
  return key;
}

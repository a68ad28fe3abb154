import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createSecretCipher,
  decodeSecretsKey,
  loadOrCreateSecretsKey,
  SecretDecryptError,
  SECRETS_KEY_FILE,
} from './secrets';

const key = randomBytes(32);
const cipher = createSecretCipher(key);
const CONTEXT = 'upstreams.api_key:usr_alice';

describe('secrets at rest', () => {
  it('a sealed secret opens again to the same text', () => {
    for (const secret of ['sk-live-0123456789', '', 'ünïcødé 🔑', 'x'.repeat(10_000)]) {
      expect(cipher.decrypt(cipher.encrypt(secret, CONTEXT), CONTEXT)).toBe(secret);
    }
  });

  it('the stored form is versioned "v1" + IV + tag + data and never contains the plaintext', () => {
    const sealed = Buffer.from(cipher.encrypt('sk-live-plaintext', CONTEXT));
    expect(sealed.subarray(0, 2).toString('ascii')).toBe('v1');
    expect(sealed.length).toBe(2 + 12 + 16 + 'sk-live-plaintext'.length);
    expect(sealed.includes(Buffer.from('sk-live-plaintext'))).toBe(false);
  });

  it('sealing the same secret twice gives different bytes (a fresh IV each time)', () => {
    expect(Buffer.from(cipher.encrypt('same', CONTEXT)).equals(Buffer.from(cipher.encrypt('same', CONTEXT)))).toBe(
      false,
    );
  });

  it('a tampered ciphertext is refused, whichever byte changed', () => {
    const sealed = cipher.encrypt('sk-live-0123456789', CONTEXT);
    for (const index of [2, 14, 20, sealed.length - 1]) {
      const tampered = new Uint8Array(sealed);
      tampered[index]! ^= 0x01;
      expect(() => cipher.decrypt(tampered, CONTEXT)).toThrow(SecretDecryptError);
    }
    expect(() => cipher.decrypt(sealed.subarray(0, 20), CONTEXT)).toThrow(SecretDecryptError);
  });

  it('a ciphertext sealed with another key is refused', () => {
    const other = createSecretCipher(randomBytes(32));
    expect(() => other.decrypt(cipher.encrypt('sk-live-0123456789', CONTEXT), CONTEXT)).toThrow(SecretDecryptError);
  });

  it('a ciphertext moved to another account or column is refused', () => {
    const sealed = cipher.encrypt('sk-live-0123456789', CONTEXT);
    expect(() => cipher.decrypt(sealed, 'upstreams.api_key:usr_mallory')).toThrow(SecretDecryptError);
    expect(() => cipher.decrypt(sealed, 'upstreams.headers:usr_alice')).toThrow(SecretDecryptError);
  });

  it('an unknown format version is refused rather than guessed at', () => {
    const sealed = cipher.encrypt('sk', CONTEXT);
    sealed[1] = '2'.charCodeAt(0);
    expect(() => cipher.decrypt(sealed, CONTEXT)).toThrow(/unknown format version/);
  });

  it('the refusal never carries the key or the plaintext', () => {
    const sealed = cipher.encrypt('sk-live-0123456789', CONTEXT);
    sealed[sealed.length - 1]! ^= 0xff;
    let message = '';
    try {
      cipher.decrypt(sealed, CONTEXT);
    } catch (error) {
      message = String((error as Error).message);
    }
    expect(message).not.toContain('sk-live');
    expect(message).not.toContain(key.toString('base64'));
  });

  it('a key of any length but 32 bytes is refused', () => {
    expect(() => createSecretCipher(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('configured keys', () => {
  it('accepts 32 bytes in standard or URL-safe base64, padded or not', () => {
    const raw = randomBytes(32);
    expect(decodeSecretsKey(raw.toString('base64'))?.equals(raw)).toBe(true);
    expect(decodeSecretsKey(raw.toString('base64url'))?.equals(raw)).toBe(true);
    expect(decodeSecretsKey(` ${raw.toString('base64')}\n`)?.equals(raw)).toBe(true);
  });

  it('refuses anything that is not exactly 32 bytes of base64', () => {
    expect(decodeSecretsKey(randomBytes(16).toString('base64'))).toBeUndefined();
    expect(decodeSecretsKey(randomBytes(33).toString('base64'))).toBeUndefined();
    expect(decodeSecretsKey('not a key at all, not a key at all, not a k')).toBeUndefined();
    expect(decodeSecretsKey('')).toBeUndefined();
  });
});

describe('the embedded key file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sbc-secrets-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is generated on first start with mode 0600 and re-used on restart', async () => {
    const dataDir = path.join(dir, 'data');
    const first = await loadOrCreateSecretsKey(dataDir);
    expect(first.created).toBe(true);
    expect(first.file).toBe(path.join(dataDir, SECRETS_KEY_FILE));
    expect((await stat(first.file!)).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateSecretsKey(dataDir);
    expect(second.created).toBe(false);
    expect(second.key.equals(first.key)).toBe(true);
  });

  it(
    'a damaged key file stops the start instead of being ' + 'replaced, which would orphan every stored secret',
    async () => {
      await writeFile(path.join(dir, SECRETS_KEY_FILE), 'garbage\n');
      await expect(loadOrCreateSecretsKey(dir)).rejects.toThrow(/not a base64 32-byte key/);
      expect(await readFile(path.join(dir, SECRETS_KEY_FILE), 'utf8')).toBe('garbage\n');
    },
  );

  it('two starts racing on an empty directory end up with one key', async () => {
    const [a, b] = await Promise.all([loadOrCreateSecretsKey(dir), loadOrCreateSecretsKey(dir)]);
    expect(a.key.equals(b.key)).toBe(true);
  });

  it('memory:// keeps nothing on disk', async () => {
    const result = await loadOrCreateSecretsKey('memory://');
    expect(result.file).toBeUndefined();
    expect(result.key).toHaveLength(32);
  });
});

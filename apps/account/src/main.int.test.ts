import { randomBytes } from 'node:crypto';
import { hashSecret } from '@sbc/ids';
import { checkHealth } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadAccountConfig, start } from './main';

const KEY = 'sbc_account_shell_key_0123456789abcdef';
// Required with a DATABASE_URL (real PostgreSQL in CI); harmless on PGlite.
const SECRETS_KEY = randomBytes(32).toString('base64');

describe('account service start', () => {
  let db: TestDatabase;
  const config = () =>
    loadAccountConfig({ ACCOUNT_GRPC_PORT: '0', ACCOUNT_HTTP_PORT: '0', DATABASE_URL: db.databaseUrl, SBC_DATA_DIR: 'memory://', SBC_BOOTSTRAP_KEY: KEY, UPSTREAM_SECRETS_KEY: SECRETS_KEY, LOG_LEVEL: 'silent' });
  beforeAll(async () => {
    db = await createTestDatabase('account');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('migrates an empty database, creates the owner and the bootstrap key, and stores only its hash', async () => {
    const running = await start(config());
    try {
      expect(await checkHealth(running.grpcAddress)).toBe('SERVING');
      const prisma = running.database.prisma;
      const keys = await prisma.callerKey.findMany({ include: { user: true } });
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ name: 'bootstrap', route: 'auto', mode: 'model', incognito: false, revokedAt: null });
      expect(keys[0]!.user.email).toBe('owner@localhost');
      expect(Buffer.from(keys[0]!.keyHash).equals(hashSecret(KEY))).toBe(true);
      expect(JSON.stringify(keys, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(KEY);
    } finally {
      await running.stop();
    }
  });

  it('is idempotent on restart: the same owner and key, nothing added', async () => {
    const running = await start(config());
    try {
      const prisma = running.database.prisma;
      expect(await prisma.callerKey.count()).toBe(1);
      expect(await prisma.user.count()).toBe(1);
    } finally {
      await running.stop();
    }
  });
});

import { randomBytes } from 'node:crypto';
import { hashSecret, newId, newSecret } from '@sbc/ids';
import { ApiError } from '@sbc/errors';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { SessionService } from '@sbc/proto/sbc/account/v1/sessions_pb';
import { checkHealth, createRpcClient } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadAccountConfig, start } from './main';

const KEY = 'sbc_account_shell_key_0123456789abcdef';
// Required with a DATABASE_URL (real PostgreSQL in CI); harmless on PGlite.
const SECRETS_KEY = randomBytes(32).toString('base64');

describe('account service start', () => {
  let db: TestDatabase;
  const config = (env: Record<string, string> = { SBC_BOOTSTRAP_KEY: KEY }) =>
    loadAccountConfig({
      ACCOUNT_GRPC_PORT: '0',
      ACCOUNT_HTTP_PORT: '0',
      DATABASE_URL: db.databaseUrl,
      SBC_DATA_DIR: db.dataDir,
      UPSTREAM_SECRETS_KEY: SECRETS_KEY,
      LOG_LEVEL: 'silent',
      ...env,
    });
  beforeAll(async () => {
    // Every test restarts the service on the same database.
    db = await createTestDatabase('account', { restarts: true });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('migrates an empty database, creates the owner and the bootstrap key, and stores only its hash', async () => {
    const running = await start(config());
    try {
      // A first call's connection set-up can outlast the readiness probes' 1 s deadline on a busy test machine.
      expect(await checkHealth(running.grpcAddress, '', 10_000)).toBe('SERVING');
      const prisma = running.database.prisma;
      const keys = await prisma.callerKey.findMany({ include: { user: true } });
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({
        name: 'bootstrap',
        route: 'auto',
        mode: 'model',
        incognito: false,
        revokedAt: null,
      });
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

  /** Whether the account service marks the credential's user an operator, as the edge learns it. */
  async function isOperator(running: Awaited<ReturnType<typeof start>>, secret: string): Promise<boolean> {
    const account = createRpcClient(AccountService, { target: running.grpcAddress, deadlineMs: 5_000 });
    const reply = await account.authenticateCredential({ secretSha256: hashSecret(secret) }, { requestId: 'test' });
    return reply.principal!.operator;
  }

  it(
    'the bootstrap owner is the operator on every start, with the bootstrap key or without it (services mode); no ' +
      'one else is',
    async () => {
      const stranger = newSecret('sbs');
      const seed = await start(config());
      try {
        const user = await seed.database.prisma.user.create({
          data: { id: newId('usr'), email: 'someone@example.test' },
        });
        await seed.database.prisma.session.create({
          data: {
            tokenHash: new Uint8Array(hashSecret(stranger)),
            userId: user.id,
            expiresAt: new Date(Date.now() + 86_400_000),
          },
        });
        expect([await isOperator(seed, KEY), await isOperator(seed, stranger)]).toEqual([true, false]);
      } finally {
        await seed.stop();
      }
      const withoutKey = await start(config({}));
      try {
        expect([await isOperator(withoutKey, KEY), await isOperator(withoutKey, stranger)]).toEqual([true, false]);
      } finally {
        await withoutKey.stop();
      }
    },
  );

  it(
    'without a bootstrap key, a stranger cannot sign up as ' + 'the bootstrap address the owner has not claimed yet',
    async () => {
      const running = await start(config({ SBC_SIGNUP_ENABLED: 'true', SBC_BOOTSTRAP_EMAIL: 'boss@example.test' }));
      try {
        const sessions = createRpcClient(SessionService, { target: running.grpcAddress, deadlineMs: 5_000 });
        const claimed = sessions.signUp(
          { email: 'Boss@Example.test', password: 'a long enough password 1' },
          { requestId: 'test' },
        );
        await expect(claimed).rejects.toMatchObject({ code: 'conflict' });
        await expect(claimed).rejects.toBeInstanceOf(ApiError);
        expect(await running.database.prisma.user.count({ where: { email: 'boss@example.test' } })).toBe(0);
      } finally {
        await running.stop();
      }
    },
  );

  it('X_BUILDS_ADMIN_USER_IDS names the operators instead of the owner', async () => {
    const running = await start(config({ SBC_BOOTSTRAP_KEY: KEY, X_BUILDS_ADMIN_USER_IDS: 'usr_someone_else' }));
    try {
      expect(await isOperator(running, KEY)).toBe(false);
    } finally {
      await running.stop();
    }
  });
});

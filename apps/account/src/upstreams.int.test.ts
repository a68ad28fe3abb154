import { randomBytes } from 'node:crypto';
import { createMemoryPubSub, type PubSub } from '@sbc/cache';
import { ApiError } from '@sbc/errors';
import { ALIASES_CHANGED_CHANNEL } from '@sbc/events';
import { newId } from '@sbc/ids';
import { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadAccountConfig, start, type RunningAccount } from './main';

// The HTTP surface is covered end to end in apps/embedded; this runs the account service alone with
// EGRESS_DENY_PRIVATE, which the embedded stack leaves off so it can probe its local simulator.
describe('UpstreamService with EGRESS_DENY_PRIVATE', () => {
  let db: TestDatabase;
  let pubsub: PubSub;
  let running: RunningAccount;
  let client: RpcClientOf<typeof UpstreamService>;
  const alice = newId('usr');

  beforeAll(async () => {
    db = await createTestDatabase('account_upstreams_egress');
    pubsub = createMemoryPubSub();
    running = await start(
      loadAccountConfig({
        ACCOUNT_GRPC_PORT: '0',
        ACCOUNT_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        UPSTREAM_SECRETS_KEY: randomBytes(32).toString('base64'),
        EGRESS_DENY_PRIVATE: 'true',
        LOG_LEVEL: 'silent',
      }),
      { pubsub },
    );
    client = createRpcClient(UpstreamService, { target: running.grpcAddress, deadlineMs: 15_000 });
    await running.database.prisma.user.create({ data: { id: alice, email: `${alice.toLowerCase()}@example.test` } });
  });

  afterAll(async () => {
    client?.close();
    await running?.stop();
    await pubsub?.close();
    await db?.drop();
  });

  it.each([
    'http://127.0.0.1:8090/v1',
    'http://localhost:11434',
    'http://10.0.0.5',
    'http://[::1]:8000',
    'http://169.254.169.254/latest',
  ])('a private base_url (%s) is 400 invalid_request when created, and nothing is saved', async (baseUrl) => {
    const error = await client
      .createUpstream({ userId: alice, label: 'inward', baseUrl, apiKey: 'k', dialect: 'openai' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'invalid_request', param: 'base_url' });
    expect(await running.database.prisma.upstream.count({ where: { userId: alice, label: 'inward' } })).toBe(0);
  });

  it(
    'moving an endpoint to a private base_url is refused; ' + 'one saved before the switch is refused when dialed',
    async () => {
      // Saved directly, as rows written before EGRESS_DENY_PRIVATE was set would be.
      await running.routing.saveUpstream({
        userId: alice,
        slug: 'legacy',
        label: 'legacy',
        baseUrl: 'http://127.0.0.1:9',
        dialect: 'openai',
        apiKey: 'k',
      });
      const moved = await client
        .updateUpstream({ userId: alice, slug: 'legacy', baseUrl: 'http://192.168.1.10' })
        .catch((e: unknown) => e);
      expect(moved).toMatchObject({ code: 'invalid_request', param: 'base_url' });
      const probed = await client.probeUpstream({ userId: alice, slug: 'legacy' });
      expect(probed.result?.probe).toMatchObject({
        ok: false,
        error: expect.stringMatching(/127\.0\.0\.1 is a loopback or private address/),
      });
    },
  );

  it('alias writes are published for paired devices, a no-op delete is not', async () => {
    const heard: unknown[] = [];
    const unsubscribe = await pubsub.subscribe(ALIASES_CHANGED_CHANNEL, (message) => {
      heard.push(JSON.parse(message));
    });
    try {
      const put = await client.putAlias({ userId: alice, token: '@Work', vendor: 'openai', modelId: 'gpt-6-luna' });
      const deleted = await client.deleteAlias({ userId: alice, token: 'work' });
      const again = await client.deleteAlias({ userId: alice, token: 'work' });
      expect([put.write?.rev, deleted.write?.rev, again.write?.rev]).toEqual([1n, 2n, 2n]);
      expect(heard).toEqual([
        { user_id: alice, token: '@work', rev: 1, deleted: false },
        { user_id: alice, token: '@work', rev: 2, deleted: true },
      ]);
    } finally {
      await unsubscribe();
    }
  });
});

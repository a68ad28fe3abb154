import { randomBytes } from 'node:crypto';
import { ApiError } from '@sbc/errors';
import { newId } from '@sbc/ids';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadAccountConfig, start, type RunningAccount } from './main';

// Saved, and its probe fails without a connection: weights do not depend on what the endpoint answers.
const UNRESOLVABLE = 'http://endpoint.invalid';

describe('endpoint routing weight over gRPC (CONTRACTS "Routing policy")', () => {
  let db: TestDatabase;
  let running: RunningAccount;
  let upstreams: RpcClientOf<typeof UpstreamService>;
  let account: RpcClientOf<typeof AccountService>;

  beforeAll(async () => {
    db = await createTestDatabase('account_upstream_weight');
    running = await start(
      loadAccountConfig({
        ACCOUNT_GRPC_PORT: '0',
        ACCOUNT_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        UPSTREAM_SECRETS_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'silent',
      }),
    );
    upstreams = createRpcClient(UpstreamService, { target: running.grpcAddress, deadlineMs: 15_000 });
    account = createRpcClient(AccountService, { target: running.grpcAddress });
  });

  afterAll(async () => {
    upstreams?.close();
    account?.close();
    await running?.stop();
    await db?.drop();
  });

  async function newUser(): Promise<string> {
    const id = newId('usr');
    await running.database.prisma.user.create({ data: { id, email: `${id.toLowerCase()}@example.test` } });
    return id;
  }

  const create = (userId: string, label: string, weight?: number) =>
    upstreams.createUpstream({ userId, label, baseUrl: UNRESOLVABLE, apiKey: '', dialect: 'openai', weight });

  const routedWeights = async (userId: string) =>
    Object.fromEntries((await account.getRoutingTable({ userId })).upstreams.map((u) => [u.slug, u.weight]));

  it('a new endpoint has weight 1 unless it names one, and the routing table carries the stored weight', async () => {
    const userId = await newUser();
    const plain = await create(userId, 'Plain');
    const heavy = await create(userId, 'Heavy', 100);
    const standby = await create(userId, 'Standby', 0);
    expect([plain, heavy, standby].map((saved) => saved.result?.upstream?.weight)).toEqual([1, 100, 0]);
    const listed = await upstreams.listUpstreams({ userId, limit: 10 });
    expect(Object.fromEntries(listed.upstreams.map((u) => [u.slug, u.weight]))).toEqual({
      plain: 1,
      heavy: 100,
      standby: 0,
    });
    expect(await routedWeights(userId)).toEqual({ plain: 1, heavy: 100, standby: 0 });
  });

  it('an edit sets the weight (0 included) and an edit that leaves it out keeps it', async () => {
    const userId = await newUser();
    await create(userId, 'Primary');
    const raised = await upstreams.updateUpstream({ userId, slug: 'primary', weight: 7 });
    expect(raised.result?.upstream?.weight).toBe(7);
    const relabelled = await upstreams.updateUpstream({ userId, slug: 'primary', label: 'Primary GPU' });
    expect(relabelled.result?.upstream).toMatchObject({ label: 'Primary GPU', weight: 7 });
    const parked = await upstreams.updateUpstream({ userId, slug: 'primary', weight: 0 });
    expect(parked.result?.upstream?.weight).toBe(0);
    expect(await routedWeights(userId)).toEqual({ primary: 0 });
  });

  it.each([-1, 101, 2 ** 31 - 1])(
    'a weight of %d is refused as invalid_request naming weight, and nothing changes',
    async (weight) => {
      const userId = await newUser();
      const refusedCreate = await create(userId, 'Refused', weight).catch((e: unknown) => e);
      expect(refusedCreate).toBeInstanceOf(ApiError);
      expect(refusedCreate).toMatchObject({ code: 'invalid_request', param: 'weight' });
      expect(await running.database.prisma.upstream.count({ where: { userId } })).toBe(0);

      await create(userId, 'Kept', 3);
      const refusedEdit = await upstreams.updateUpstream({ userId, slug: 'kept', weight }).catch((e: unknown) => e);
      expect(refusedEdit).toMatchObject({ code: 'invalid_request', param: 'weight' });
      expect(await routedWeights(userId)).toEqual({ kept: 3 });
    },
  );

  it('an endpoint stored before weights existed routes with weight 1', async () => {
    const userId = await newUser();
    // A row as the migrations before 0004 wrote it: no weight column named.
    await running.database.prisma.$executeRawUnsafe(
      `INSERT INTO upstreams (id, user_id, slug, label, base_url, dialect) ` +
        `VALUES ($1, $2, 'older', 'Older', $3, 'openai')`,
      newId('ups'),
      userId,
      UNRESOLVABLE,
    );
    expect(await routedWeights(userId)).toEqual({ older: 1 });
  });
});

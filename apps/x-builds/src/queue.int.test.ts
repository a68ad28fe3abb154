import { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import { createRpcClient } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { admit, type Submission } from './intake/admit';
import { loadXBuildsConfig, start } from './main';
import { publishBundle } from './store/apps';
import { claimJobs, startBackoff, updateSettings } from './store/queue';

// The builds service with no gateway configured: intake refuses, and its own dispatcher never claims, so
// these tests drive intake and claims against its real database themselves (until the last one).
describe('x builds queue and intake against PostgreSQL', () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  let gatewayUrl: string | undefined;
  let post = 5_000;
  const open = { authorDailyLimit: 5, dailyCap: 1_000, appCapacity: 1_000 };

  beforeAll(async () => {
    db = await createTestDatabase('x_builds_queue');
    running = await start(
      loadXBuildsConfig({
        X_BUILDS_GRPC_PORT: '0',
        X_BUILDS_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'silent',
        X_BUILDS_DISPATCH_POLL_MS: '100',
        RPC_DEADLINE_MS: '1000',
      }),
      // Nothing listens on port 1: minting a build key fails at once.
      { gatewayUrl: () => gatewayUrl, accountTarget: '127.0.0.1:1' },
    );
  });
  afterAll(async () => {
    await running?.stop();
    await db?.drop();
  });
  beforeEach(async () => {
    const prisma = running.database.prisma;
    await prisma.$executeRawUnsafe('TRUNCATE job_events, job_stage_spans, app_files, apps, job_media, build_jobs');
    await updateSettings(prisma, { maxConcurrent: 4, maxQueue: 100, paused: false });
    await prisma.queueSettings.update({ where: { id: 1 }, data: { backoffUntil: null } });
  });

  const prisma = () => running.database.prisma;
  const submission = (authorId: string): Submission => ({
    userId: 'usr_01TESTTESTTESTTESTTESTTEST',
    bounds: { allowedModels: null, route: 'auto', boundByKey: false },
    source: { type: 'x', postId: String((post += 1)), authorId, text: 'a game' },
  });
  const intake = (limits = open) => ({ db: prisma(), limits, notConfigured: () => undefined });
  const queueJobs = async (count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push((await admit(intake(), submission(`author-${post}-${i}`))).job.id);
    return ids;
  };
  const claim = (workerId: string, leaseMs = 60_000, maxAttempts = 3) =>
    claimJobs(prisma(), { workerId, leaseMs, maxAttempts });

  it(
    'refuses every submission with 503 xbuilds_not_configured ' + 'while no gateway is configured, and writes nothing',
    async () => {
      const client = createRpcClient(XBuildsService, { target: running.grpcAddress });
      try {
        await expect(
          client.submitJob({
            caller: { userId: 'usr_x', route: 'auto' },
            source: { kind: { case: 'api', value: { prompt: 'a clock' } } },
          }),
        ).rejects.toMatchObject({
          code: 'xbuilds_not_configured',
          status: 503,
        });
      } finally {
        client.close();
      }
      expect(await prisma().buildJob.count()).toBe(0);
    },
  );

  it('refuses past the daily cap and past the live-app capacity, in that order, with nothing written', async () => {
    await queueJobs(2);
    await expect(admit(intake({ ...open, dailyCap: 2 }), submission('late'))).rejects.toMatchObject({
      code: 'daily_cap',
      extra: { retry_after_s: expect.any(Number) },
    });
    const [first] = await prisma().buildJob.findMany();
    await publishBundle(prisma(), {
      jobId: first!.id,
      title: 'x',
      html: '<!doctype html><html></html>',
      csp: "default-src 'none'",
    });
    await expect(admit(intake({ ...open, dailyCap: 2, appCapacity: 1 }), submission('late'))).rejects.toMatchObject({
      code: 'daily_cap',
    });
    await expect(admit(intake({ ...open, appCapacity: 1 }), submission('late'))).rejects.toMatchObject({
      code: 'app_capacity',
    });
    expect(await prisma().buildJob.count()).toBe(2);
  });

  it(
    'claims in (pinned, position) order and never more than ' + 'max_concurrent, however many replicas claim at once',
    async () => {
      const ids = await queueJobs(6);
      await prisma().buildJob.update({ where: { id: ids[4]! }, data: { pinned: true } });
      await updateSettings(prisma(), { maxConcurrent: 3 });
      const rounds = await Promise.all(['w1', 'w2', 'w3', 'w4'].map((worker) => claim(worker)));
      const claimed = rounds.flatMap((round) => round.claimed);
      expect(claimed).toHaveLength(3);
      expect(new Set(claimed.map((job) => job.id))).toEqual(new Set([ids[4], ids[0], ids[1]]));
      expect(claimed.every((job) => job.status === 'screening' && job.attempt === 1)).toBe(true);
      expect((await claim('w5')).claimed).toHaveLength(0);
    },
  );

  it('claims nothing while paused, and at most 2 at once while a build backoff is active', async () => {
    await queueJobs(4);
    await updateSettings(prisma(), { paused: true });
    expect((await claim('w1')).claimed).toHaveLength(0);
    await updateSettings(prisma(), { paused: false });
    await startBackoff(prisma(), 60_000);
    expect((await claim('w1')).claimed).toHaveLength(2);
    expect((await claim('w2')).claimed).toHaveLength(0);
  });

  it(
    'puts a job whose lease ran out back at the front to ' +
      'resume its stage, and fails it once its attempts are used',
    async () => {
      const [stuck, waiting] = await queueJobs(2);
      await updateSettings(prisma(), { maxConcurrent: 1 });
      expect((await claim('dead-worker', 50, 2)).claimed.map((job) => job.id)).toEqual([stuck]);
      await prisma().buildJob.update({ where: { id: stuck! }, data: { status: 'building' } });
      await new Promise((resolve) => setTimeout(resolve, 100));

      const second = await claim('live-worker', 50, 2);
      expect(second.recovered).toEqual([stuck]);
      expect(second.claimed.map((job) => [job.id, job.status, job.attempt])).toEqual([[stuck, 'building', 2]]);
      await new Promise((resolve) => setTimeout(resolve, 100));

      const third = await claim('another-worker', 50, 2);
      expect(third.recovered).toEqual([stuck]);
      expect(third.claimed.map((job) => job.id)).toEqual([waiting]);
      const failed = await prisma().buildJob.findUniqueOrThrow({ where: { id: stuck! } });
      expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('stalled in building 2 times') });
      const events = await prisma().jobEvent.findMany({ where: { jobId: stuck! }, orderBy: { id: 'asc' } });
      expect(events.map((event) => event.type)).toEqual(['queued', 'claimed', 'stalled', 'claimed', 'stalled']);
    },
  );

  it('starts claiming once the edge address is known, though it was unknown when the service started', async () => {
    const { job } = await admit(intake(), submission('late-edge'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await prisma().buildJob.findUniqueOrThrow({ where: { id: job.id } })).status).toBe('queued');
    gatewayUrl = 'http://127.0.0.1:1';
    const deadline = Date.now() + 10_000;
    let status = 'queued';
    while (status !== 'failed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await prisma().buildJob.findUniqueOrThrow({ where: { id: job.id } })).status;
    }
    // Claimed; with no account service to mint its build key, the job fails and says why.
    const settled = await prisma().buildJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(settled).toMatchObject({
      status: 'failed',
      attempt: 1,
      error: expect.stringContaining('No build key could be minted'),
    });
  });
});

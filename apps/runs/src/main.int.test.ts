import { checkHealth } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadRunsConfig, start } from './main';

describe('runs service shell', () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    db = await createTestDatabase('runs');
    running = await start(
      loadRunsConfig({
        RUNS_GRPC_PORT: '0',
        RUNS_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'silent',
      }),
    );
  });
  afterAll(async () => {
    await running?.stop();
    await db?.drop();
  });

  it('migrates an empty database so that every column of the Prisma schema exists', async () => {
    expect(running.database.applied).toEqual([
      '0001_projects.sql',
      '0002_runs_events_webhooks.sql',
      '0003_webhook_dial_as.sql',
      '0004_stored_responses.sql',
      '0005_files.sql',
      '0006_batches.sql',
      '0007_batch_pause.sql',
    ]);
    await running.database.prisma.project.create({
      data: {
        id: 'prj_1',
        accountId: 'usr_1',
        name: 'demo',
        instructions: 'be brief',
        defaultModel: 'house',
        deletedAt: null,
      },
    });
    const stored = await running.database.prisma.project.findUniqueOrThrow({ where: { id: 'prj_1' } });
    expect(stored).toMatchObject({ name: 'demo', defaultModel: 'house', createdAt: expect.any(Date) });

    // Every other model, every column set, read back through Prisma.
    const prisma = running.database.prisma;
    const now = new Date();
    await prisma.run.create({
      data: {
        id: 'run_1',
        accountId: 'usr_1',
        projectId: 'prj_1',
        status: 'succeeded',
        model: 'house',
        prompt: 'p',
        output: 'o',
        error: { code: 'x', message: 'y' },
        usage: { steps: 1 },
        metadata: { a: 'b' },
        caller: { user_id: 'usr_1' },
        idempotencyKey: 'k',
        requestHash: 'h',
        lastSeq: 1,
        attempt: 1,
        leaseOwner: 'w',
        leaseUntil: now,
        heartbeatAt: now,
        cancelRequestedAt: now,
        invokeKeyId: 'key_1',
        transcript: [],
        startedAt: now,
        settledAt: now,
      },
    });
    await prisma.runEvent.create({ data: { runId: 'run_1', seq: 1, type: 'run.queued', data: {} } });
    await prisma.workspaceFile.create({ data: { projectId: 'prj_1', path: 'a.md', content: 'x' } });
    await prisma.exchange.create({
      data: {
        id: 'msg_x',
        runId: 'run_1',
        host: 'h',
        method: 'GET',
        url: 'https://h/',
        status: 200,
        request: {},
        response: {},
      },
    });
    await prisma.webhookEndpoint.create({
      data: {
        id: 'whk_1',
        accountId: 'usr_1',
        url: 'https://h/',
        events: [],
        secret: 's',
        disabledAt: now,
        disabledReason: 'r',
        deletedAt: now,
      },
    });
    await prisma.webhookEvent.create({
      data: { id: 'evt_1', accountId: 'usr_1', runId: 'run_1', type: 'run.succeeded', payload: '{}' },
    });
    await prisma.webhookDelivery.create({
      data: { id: 'msg_1', eventId: 'evt_1', endpointId: 'whk_1', attempts: 1, nextAttemptAt: now },
    });
    await prisma.webhookAttempt.create({
      data: { deliveryId: 'msg_1', attempt: 1, statusCode: 500, error: 'e', durationMs: 3 },
    });
    expect(await prisma.webhookAttempt.findMany({ where: { deliveryId: 'msg_1' } })).toHaveLength(1);
    expect(await prisma.run.findUniqueOrThrow({ where: { id: 'run_1' } })).toMatchObject({
      status: 'succeeded',
      invokeKeyId: 'key_1',
    });
  });

  it('serves gRPC health, turns NOT_SERVING and unready when stopping', async () => {
    // A first call's connection set-up can outlast the readiness probes' 1 s deadline on a busy test machine.
    expect(await checkHealth(running.grpcAddress, '', 10_000)).toBe('SERVING');
    expect((await fetch(`${running.httpUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${running.httpUrl}/readyz`)).status).toBe(200);
  });
});

import { checkHealth } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadXBuildsConfig, start } from './main';

describe('x-builds service', () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    db = await createTestDatabase('x_builds');
    running = await start(
      loadXBuildsConfig({
        X_BUILDS_GRPC_PORT: '0',
        X_BUILDS_HTTP_PORT: '0',
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

  it(
    'migrates an empty database to the tables the Prisma ' + 'schema describes, with the one queue-settings row',
    async () => {
      expect(running.database.applied).toEqual([
        '0001_queue_settings.sql',
        '0002_jobs_queue_apps.sql',
        '0003_browser_media.sql',
      ]);
      expect(await running.database.prisma.buildJob.count()).toBe(0);
      const settings = await running.database.prisma.queueSettings.findUniqueOrThrow({ where: { id: 1 } });
      expect(settings).toMatchObject({ paused: false, maxConcurrent: 4, maxQueue: 100, updatedAt: expect.any(Date) });
    },
  );

  it('serves gRPC health and HTTP readiness', async () => {
    // A first call's connection set-up can outlast the readiness probes' 1 s deadline on a busy test machine.
    expect(await checkHealth(running.grpcAddress, '', 10_000)).toBe('SERVING');
    expect((await fetch(`${running.httpUrl}/readyz`)).status).toBe(200);
  });
});

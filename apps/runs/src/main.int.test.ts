import { checkHealth } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadRunsConfig, start } from './main';

describe('runs service shell', () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    db = await createTestDatabase('runs');
    running = await start(loadRunsConfig({ RUNS_GRPC_PORT: '0', RUNS_HTTP_PORT: '0', DATABASE_URL: db.databaseUrl, SBC_DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }));
  });
  afterAll(async () => {
    await running?.stop();
    await db?.drop();
  });

  it('migrates an empty database so that every column of the Prisma schema exists', async () => {
    expect(running.database.applied).toEqual(['0001_projects.sql']);
    await running.database.prisma.project.create({
      data: { id: 'prj_1', accountId: 'usr_1', name: 'demo', instructions: 'be brief', defaultModel: 'house', deletedAt: null },
    });
    const stored = await running.database.prisma.project.findUniqueOrThrow({ where: { id: 'prj_1' } });
    expect(stored).toMatchObject({ name: 'demo', defaultModel: 'house', createdAt: expect.any(Date) });
  });

  it('serves gRPC health, turns NOT_SERVING and unready when stopping', async () => {
    expect(await checkHealth(running.grpcAddress)).toBe('SERVING');
    expect((await fetch(`${running.httpUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${running.httpUrl}/readyz`)).status).toBe(200);
  });
});

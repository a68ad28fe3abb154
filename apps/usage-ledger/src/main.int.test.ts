import { checkHealth } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadUsageLedgerConfig, start } from './main';

describe('usage-ledger service shell', () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    db = await createTestDatabase('usage_ledger');
    running = await start(
      loadUsageLedgerConfig({ USAGE_LEDGER_GRPC_PORT: '0', USAGE_LEDGER_HTTP_PORT: '0', DATABASE_URL: db.databaseUrl, SBC_DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }),
    );
  });
  afterAll(async () => {
    await running?.stop();
    await db?.drop();
  });

  it('migrates an empty database so that every column of the Prisma schema exists', async () => {
    expect(running.database.applied).toEqual(['0001_usage_generations.sql', '0002_usage_event_details.sql']);
    const row = {
      requestId: 'req_1', accountId: 'usr_1', userId: 'usr_1', keyId: 'key_1', orgId: 'org_1', model: 'house', upstream: 'house',
      provider: 'sim', dialectIn: 'chat', dialectOut: 'messages', route: 'credits', tokensPrompt: 10n, tokensCompletion: 20n,
      cacheRead: 3n, cacheWrite: 4n, totalCostUsd: '0.000123', cacheDiscountUsd: '0.00001', creditsCharged: '0.123', isByok: false,
      status: 200, latencyMs: 120, ttftMs: 40, sessionId: 'ses_1', ts: new Date('2026-11-01T00:00:00Z'),
      upstreamModel: 'house-1', keyLabel: 'laptop', reasoningTokens: 5n, stream: true, fairUseCredits: '1.5',
    };
    await running.database.prisma.usageGeneration.create({ data: row });
    const stored = await running.database.prisma.usageGeneration.findUniqueOrThrow({ where: { requestId: 'req_1' } });
    expect(stored.tokensCompletion).toBe(20n);
    expect(stored.totalCostUsd.toString()).toBe('0.000123');
    expect(stored.fairUseCredits.toString()).toBe('1.5');
  });

  it('serves gRPC health and HTTP readiness', async () => {
    expect(await checkHealth(running.grpcAddress)).toBe('SERVING');
    expect((await fetch(`${running.httpUrl}/readyz`)).status).toBe(200);
  });
});

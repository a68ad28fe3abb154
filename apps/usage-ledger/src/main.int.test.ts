import { checkHealth } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadUsageLedgerConfig, start } from './main';

describe('usage-ledger service shell', () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    db = await createTestDatabase('usage_ledger');
    running = await start(
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
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
      '0001_usage_generations.sql',
      '0002_usage_event_details.sql',
      '0003_rollups_credits_spend.sql',
      '0004_event_ids_dead_letters.sql',
      '0005_served_by_attempts.sql',
      '0006_cache_hit.sql',
      '0007_guardrail.sql',
    ]);
    const row = {
      eventId: 'evt_1',
      requestId: 'req_1',
      accountId: 'usr_1',
      userId: 'usr_1',
      keyId: 'key_1',
      orgId: 'org_1',
      model: 'house',
      upstream: 'house',
      provider: 'sim',
      dialectIn: 'chat',
      dialectOut: 'messages',
      route: 'credits',
      tokensPrompt: 10n,
      tokensCompletion: 20n,
      cacheRead: 3n,
      cacheWrite: 4n,
      totalCostUsd: '0.000123',
      cacheDiscountUsd: '0.00001',
      creditsCharged: '0.123',
      isByok: false,
      status: 200,
      latencyMs: 120,
      ttftMs: 40,
      sessionId: 'ses_1',
      ts: new Date('2026-11-01T00:00:00Z'),
      upstreamModel: 'house-1',
      keyLabel: 'laptop',
      reasoningTokens: 5n,
      stream: true,
      fairUseCredits: '1.5',
      servedBy: 'house',
      attempts: 1,
    };
    await running.database.prisma.usageGeneration.create({ data: row });
    const stored = await running.database.prisma.usageGeneration.findUniqueOrThrow({ where: { eventId: 'evt_1' } });
    expect(stored.tokensCompletion).toBe(20n);
    expect(stored.totalCostUsd.toString()).toBe('0.000123');
    expect(stored.fairUseCredits.toString()).toBe('1.5');

    const prisma = running.database.prisma;
    const dims = {
      accountId: 'usr_1',
      orgId: 'org_1',
      keyId: 'key_1',
      model: 'house',
      provider: 'sim',
      upstream: 'house',
      keyLabel: 'laptop',
    };
    const sums = {
      requests: 1n,
      failed: 0n,
      tokensIn: 10n,
      tokensOut: 20n,
      cacheRead: 3n,
      cacheWrite: 4n,
      reasoningTokens: 5n,
      listUsd: '0.000123',
      credits: '0.123',
    };
    await prisma.usageHourly.create({ data: { ...dims, ...sums, hour: new Date('2026-11-01T00:00:00Z') } });
    await prisma.usageDaily.create({ data: { ...dims, ...sums, day: new Date('2026-11-01') } });
    await prisma.creditAccount.create({
      data: {
        accountId: 'usr_1',
        plan: 'plus',
        overageLimitCredits: '500',
        refilledPeriod: '2026-11',
        lastUsageAt: new Date(),
        lastAppliedAt: new Date(),
        reconciledAt: new Date(),
      },
    });
    await prisma.creditJournalEntry.create({
      data: {
        accountId: 'usr_1',
        kind: 'pack',
        pot: 'permanent',
        credits: '5000',
        usd: '5',
        period: '2026-11',
        note: '$5 pack',
      },
    });
    await prisma.providerCost.create({
      data: { provider: 'openai', day: new Date('2026-11-01'), service: 'gpt', amountUsd: '1.25' },
    });
    await prisma.providerCostSource.create({
      data: {
        provider: 'openai',
        source: 'openai_costs_api',
        fetchedAt: new Date(),
        coveredFrom: new Date('2026-11-01'),
        coveredTo: new Date('2026-11-02'),
        lastError: null,
      },
    });
    expect((await prisma.usageDaily.findFirstOrThrow()).credits.toString()).toBe('0.123');
    expect((await prisma.creditAccount.findUniqueOrThrow({ where: { accountId: 'usr_1' } })).needsReconcile).toBe(true);
    await prisma.usageDeadLetter.create({
      data: {
        eventId: 'evt_2',
        topic: 'usage.events.v1',
        partition: 0,
        offset: '7',
        key: 'usr_1',
        error: '22P05: refused',
        event: new Uint8Array([1, 2]),
      },
    });
    expect((await prisma.usageDeadLetter.findFirstOrThrow()).replayedAt).toBeNull();
  });

  it('the credit journal is append-only: an entry cannot be edited or deleted', async () => {
    const prisma = running.database.prisma;
    const entry = await prisma.creditJournalEntry.create({
      data: { accountId: 'usr_2', kind: 'grant', pot: 'permanent', credits: '10', period: '2026-11', note: 'welcome' },
    });
    await expect(
      prisma.creditJournalEntry.update({ where: { id: entry.id }, data: { credits: '1000' } }),
    ).rejects.toThrow(/append-only/);
    await expect(prisma.creditJournalEntry.delete({ where: { id: entry.id } })).rejects.toThrow(/append-only/);
    expect((await prisma.creditJournalEntry.findUniqueOrThrow({ where: { id: entry.id } })).credits.toString()).toBe(
      '10',
    );
  });

  it('serves gRPC health and HTTP readiness', async () => {
    // A first call's connection set-up can outlast the readiness probes' 1 s deadline on a busy test machine.
    expect(await checkHealth(running.grpcAddress, '', 10_000)).toBe('SERVING');
    expect((await fetch(`${running.httpUrl}/readyz`)).status).toBe(200);
  });
});

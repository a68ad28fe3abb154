import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBus, type Bus } from '@sbc/bus';
import { createLogger } from '@sbc/logging';
import { UsageLedgerService, type Credits } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import type { RunningUsageLedger } from './main';
import { startTestLedger } from './test-ledger';

const logger = createLogger({ service: 'usage-ledger-test', level: 'silent' });

/** What an operator client reads: the permanent pot and the overage limit, from either kind of field. */
const permanentOf = (credits: Credits | undefined) => {
  const pot = credits!.pots.find((p) => p.pot === 'permanent')!;
  return {
    granted: pot.granted,
    grantedMicrocredits: pot.grantedMicrocredits,
    overageLimit: credits!.overageLimitCredits,
    overageLimitMicrocredits: credits!.overageLimitMicrocredits,
  };
};

describe('operator clients of either release, side by side', () => {
  let db: TestDatabase;
  let dataDir: string;
  let bus: Bus;
  let running: RunningUsageLedger | undefined;
  let ledger: RpcClientOf<typeof UsageLedgerService>;

  beforeAll(async () => {
    db = await createTestDatabase('usage_mixed_clients');
    dataDir = await mkdtemp(path.join(tmpdir(), 'usage-ledger-clients-'));
    bus = createBus({ clientId: 'usage-ledger-test', logger, retry: { initialMs: 10, maxMs: 50 } });
    running = await startTestLedger({ databaseUrl: db.databaseUrl, dataDir, bus, logger });
    ledger = createRpcClient(UsageLedgerService, { target: running.grpcAddress, deadlineMs: 10_000 });
  });

  afterAll(async () => {
    ledger?.close();
    await running?.stop();
    await bus?.close();
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('a grant sent as a double only (an old client) lands as the same amount in whole units', async () => {
    const old = await ledger.grantCredits({ userId: 'usr_old_client', credits: 0.1 + 0.2, reason: 'support' });
    const current = await ledger.grantCredits({
      userId: 'usr_new_client',
      microcredits: 300_000n,
      reason: 'support',
    });
    expect(permanentOf(old.credits)).toMatchObject({ granted: 0.3, grantedMicrocredits: 300_000n });
    expect(permanentOf(current.credits)).toEqual(permanentOf(old.credits));
  });

  it('whole units win over the double when a client sends both', async () => {
    const reply = await ledger.grantCredits({
      userId: 'usr_both_client',
      credits: 999,
      microcredits: 1_500_000n,
      reason: 'support',
    });
    expect(permanentOf(reply.credits)).toMatchObject({ granted: 1.5, grantedMicrocredits: 1_500_000n });
  });

  it('an overage limit sent as a double only, or in whole units, is the same limit', async () => {
    const old = await ledger.setPlan({ userId: 'usr_old_client', plan: 'plus', overageLimitCredits: 1_000.5 });
    const current = await ledger.setPlan({
      userId: 'usr_new_client',
      plan: 'plus',
      overageLimitMicrocredits: 1_000_500_000n,
    });
    expect(permanentOf(old.credits)).toMatchObject({
      overageLimit: 1_000.5,
      overageLimitMicrocredits: 1_000_500_000n,
    });
    expect(permanentOf(current.credits)).toEqual(permanentOf(old.credits));
  });

  it('a double that holds no amount is refused, not stored', async () => {
    for (const credits of [Number.NaN, Number.POSITIVE_INFINITY, 1e300])
      await expect(ledger.grantCredits({ userId: 'usr_old_client', credits, reason: 'x' })).rejects.toMatchObject({
        code: 'invalid_request',
        param: 'credits',
      });
    await expect(
      ledger.setPlan({ userId: 'usr_old_client', plan: 'plus', overageLimitCredits: 1e300 }),
    ).rejects.toMatchObject({ code: 'invalid_request', param: 'overage_limit_credits' });
    const { credits } = await ledger.getCredits({ userId: 'usr_old_client' });
    expect(permanentOf(credits)).toMatchObject({ grantedMicrocredits: 300_000n, overageLimit: 1_000.5 });
  });
});

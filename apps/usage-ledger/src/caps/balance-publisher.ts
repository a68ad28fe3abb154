import type { SharedStore } from '@sbc/cache';
import type { Logger } from '@sbc/logging';
import { microcreditsFromCredits, millicreditsFromMicrocredits } from '@sbc/money';
import { periodOf } from '../credits/plans';
import type { PrismaClient } from '../generated/prisma/client';
import {
  deriveCredits,
  ensureCreditAccount,
  findCreditAccount,
  listCreditAccounts,
  loadCreditInputs,
  markReconciled,
  refillIfDue,
  tryLockAccount,
  type CreditAccountRow,
  type CreditInputs,
  type Tx,
} from '../store/credit-accounts';

/**
 * Publishes each account's spendable balance to the edge as `credits:available:<user>` (integer millicredits
 * in the shared store), so the edge enforces it with no database round trip (apps/gateway/src/limits/budget.ts).
 *
 * The edge owns the moves that come from calls: it decrements the counter by a call's worst case before
 * dispatch and settles it to the real cost (rounded up to a whole millicredit) afterwards. The ledger never
 * overwrites that counter while calls may be in flight; it only ever:
 *
 * 1. sets the first value, when the key is absent (a new account, or a store that lost its data). The edge
 *    does not enforce, nor touch, an absent key, so a plain set cannot erase a reservation. Publishing runs
 *    under a per-account advisory lock, so two ledger replicas never both set it.
 * 2. adds deltas for balance changes that do not come from calls (a monthly refill, a plan upgrade, a pack,
 *    a grant) with INCRBY, so in-flight reservations stay intact. The delta is computed from one snapshot of
 *    the journal and usage, before and after the change, counting every call already applied in both.
 * 3. reconciles: once an account has made no call for `quietMs` (longer than the edge's longest call, so no
 *    reservation can be in flight and every settled call has reached the ledger), the counter should equal
 *    the derived balance. The ledger reads the counter and adds the difference with INCRBY (not a set): a
 *    call that starts between the read and the write keeps its reservation. This absorbs what drifts: the
 *    edge's rounding up, usage events the bus dropped, reservations an edge crash never settled, a delta lost
 *    to a crash between the journal commit and the publish. Accounts with no new usage are re-checked daily.
 *    An edge may hold a lease on the counter (a slice of the balance taken for many calls at once:
 *    docs/leased-limits.md) across a quiet spell; the reconcile would give the slice back and the edge's
 *    return add it again. So an account is not reconciled while `credits:leased:<user>` is there: edges set
 *    it with every take of a balance lease, and it expires a few seconds after the last one, so a lease a dead
 *    edge never returned is absorbed.
 *
 * The derived balance rounds down to whole millicredits, so the edge never lets through more than is left.
 */
export const balanceKey = (accountId: string) => `credits:available:${accountId}`;
const leasedKey = (accountId: string) => `credits:leased:${accountId}`;

/** The derived balance's decimal holds whole microcredits; the edge counts whole millicredits, rounded down. */
const toMilli = (credits: number): number => millicreditsFromMicrocredits(microcreditsFromCredits(credits), 'down');
const SWEEP_PAGE = 500;
const RECHECK_CLEAN_MS = 86_400_000;

export interface BalancePublisherDeps {
  db: PrismaClient;
  store: SharedStore;
  logger: Logger;
  quietMs: number;
  now?: () => Date;
}

export function createBalancePublisher(deps: BalancePublisherDeps) {
  const now = deps.now ?? (() => new Date());

  /** Runs `work` holding the account's publishing lock; skipped (false) when another replica holds it. */
  async function withAccountLock(accountId: string, work: (tx: Tx) => Promise<void>): Promise<boolean> {
    return deps.db.$transaction(async (tx) => {
      if (!(await tryLockAccount(tx, accountId))) return false;
      await work(tx);
      return true;
    });
  }

  async function availableMilli(tx: Tx, account: CreditAccountRow, at: Date): Promise<number> {
    return toMilli(deriveCredits(await loadCreditInputs(tx, account.accountId), account, periodOf(at)).available);
  }

  /** Sets the counter if absent. */
  async function publishIfAbsent(tx: Tx, account: CreditAccountRow, at: Date): Promise<boolean> {
    if ((await deps.store.get(balanceKey(account.accountId))) !== null) return false;
    await deps.store.set(balanceKey(account.accountId), String(await availableMilli(tx, account, at)));
    return true;
  }

  /**
   * Applies a balance change that does not come from a call (`change` writes it to the journal), publishing
   * its effect as a delta. Every call already applied counts in both snapshots, whatever month it fell in,
   * since the edge has already taken each of them off the counter.
   */
  async function changeBalance(
    accountId: string,
    change: (tx: Tx, account: CreditAccountRow) => Promise<void>,
  ): Promise<void> {
    const at = now();
    await deps.db.$transaction(async (tx) => {
      await tryLockAccount(tx, accountId); // best effort: a delta is additive, so it is right even without it
      const { account: before } = await ensureCreditAccount(tx, accountId, at);
      const inputsBefore = await loadCreditInputs(tx, accountId);
      await change(tx, before);
      const after = (await findCreditAccount(tx, accountId))!;
      const inputsAfter: CreditInputs = {
        ...(await loadCreditInputs(tx, accountId)),
        usageByPeriod: inputsBefore.usageByPeriod,
      };
      const period = periodOf(at);
      const fromPeriod = before.refilledPeriod ?? period;
      const was = toMilli(deriveCredits(withLaterUsageIn(inputsBefore, fromPeriod), before, fromPeriod).available);
      const is = toMilli(deriveCredits(inputsAfter, after, period).available);
      if (!(await publishIfAbsent(tx, after, at)) && is !== was)
        await deps.store.incrBy(balanceKey(accountId), is - was);
    });
  }

  return {
    /** First sight of accounts (from the consumer): publish their balance unless already there. */
    async publishNew(accountIds: string[]): Promise<void> {
      for (const accountId of accountIds) {
        try {
          await withAccountLock(accountId, async (tx) => {
            const account = await findCreditAccount(tx, accountId);
            if (account) await publishIfAbsent(tx, account, now());
          });
        } catch (error) {
          // The sweep publishes it later; the call that brought the account in is already recorded.
          deps.logger.warn({ err: error, accountId }, 'publishing a new balance failed; the next sweep retries');
        }
      }
    },

    changeBalance,

    /** Makes sure an account exists (Free, refilled) and its balance is published; for the credits read. */
    async ensurePublished(accountId: string): Promise<void> {
      const at = now();
      const { created } = await ensureCreditAccount(deps.db, accountId, at);
      const account = (await findCreditAccount(deps.db, accountId))!;
      if (account.refilledPeriod !== periodOf(at))
        await changeBalance(accountId, async (tx, current) => void (await refillIfDue(tx, current, at)));
      else if (created || (await deps.store.get(balanceKey(accountId))) === null)
        await withAccountLock(accountId, async (tx) => void (await publishIfAbsent(tx, account, at)));
    },

    /** One reconciliation pass over every account: month refills, absent counters, quiet accounts. */
    async sweep(): Promise<{ refilled: number; published: number; reconciled: number }> {
      const counts = { refilled: 0, published: 0, reconciled: 0 };
      const at = now();
      const period = periodOf(at);
      let afterId = '';
      for (;;) {
        const accounts = await listCreditAccounts(deps.db, afterId, SWEEP_PAGE);
        if (accounts.length === 0) break;
        afterId = accounts.at(-1)!.accountId;
        const published = await deps.store.getMany(accounts.map((a) => balanceKey(a.accountId)));
        for (const [i, account] of accounts.entries()) {
          try {
            if (account.refilledPeriod !== period) {
              await changeBalance(account.accountId, async (tx, current) => void (await refillIfDue(tx, current, at)));
              counts.refilled += 1;
            } else if (published[i] === null) {
              if (await withAccountLock(account.accountId, async (tx) => void (await publishIfAbsent(tx, account, at))))
                counts.published += 1;
            } else if (
              isQuiet(account, at) &&
              (await deps.store.get(leasedKey(account.accountId))) === null &&
              (account.needsReconcile ||
                !account.reconciledAt ||
                at.getTime() - account.reconciledAt.getTime() > RECHECK_CLEAN_MS)
            ) {
              await withAccountLock(account.accountId, async (tx) => {
                const target = await availableMilli(tx, account, at);
                const current = await deps.store.get(balanceKey(account.accountId));
                if (current === null) await deps.store.set(balanceKey(account.accountId), String(target));
                else if (Number(current) !== target) {
                  deps.logger.info(
                    { accountId: account.accountId, drift: target - Number(current) },
                    'published balance reconciled',
                  );
                  await deps.store.incrBy(balanceKey(account.accountId), target - Number(current));
                }
                await markReconciled(tx, account.accountId, at, now());
              });
              counts.reconciled += 1;
            }
          } catch (error) {
            deps.logger.error({ err: error, accountId: account.accountId }, 'reconciling a published balance failed');
          }
        }
      }
      return counts;
    },
  };

  function isQuiet(account: CreditAccountRow, at: Date): boolean {
    const quietSince = at.getTime() - deps.quietMs;
    return (
      (!account.lastAppliedAt || account.lastAppliedAt.getTime() < quietSince) &&
      (!account.lastUsageAt || account.lastUsageAt.getTime() < quietSince)
    );
  }
}

/** The edge's view before a month turns: every applied call, also those already stamped in the new month. */
function withLaterUsageIn(inputs: CreditInputs, period: string): CreditInputs {
  const usage = new Map<string, number>();
  for (const [month, credits] of inputs.usageByPeriod) {
    const into = month > period ? period : month;
    usage.set(into, (usage.get(into) ?? 0) + credits);
  }
  return { ...inputs, usageByPeriod: usage };
}

export type BalancePublisher = ReturnType<typeof createBalancePublisher>;

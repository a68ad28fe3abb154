import { ApiError } from '@sbc/errors';
import type { SharedStore } from '@sbc/cache';

/**
 * Spend caps and the account balance, held under concurrency: a call reserves its worst-case cost before it
 * is dispatched and settles to its real cost afterwards, so parallel calls cannot overshoot a cap together.
 *
 * Amounts are integer millicredits (1 credit = 1,000; 1 credit = $0.001) because the shared store's counters
 * are integers. Counters live in the shared store (Redis across replicas, memory embedded):
 * - `spend:key:<id>:d:<YYYYMMDD>` and `spend:key:<id>:m:<YYYYMM>`: what a key spent today / this month (UTC),
 *   so caps reset at 00:00 UTC and on the 1st;
 * - `credits:available:<user>`: the account's spendable balance, published by the usage ledger. Until the
 *   ledger has published one for an account, its balance is not enforced here.
 * - `fair:<user>:h:<hour>` and `fair:<user>:d:<day>`: house-fast credits used free of charge, for the
 *   500-per-5-hours and 2,000-per-7-days fair-use windows.
 */

export const MILLI = 1_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const FAIR_USE_5H = 500 * MILLI;
const FAIR_USE_7D = 2_000 * MILLI;

export type BudgetKind = 'account' | 'key_daily' | 'key_monthly' | 'fair_use';

export interface BudgetSubject {
  userId: string;
  keyId?: string;
  /** Whole credits; absent means no cap. */
  dailyCapCredits?: number;
  monthlyCapCredits?: number;
}

interface Counter {
  key: string;
  /** +1 counters grow with spend and must stay ≤ limit; -1 counters shrink and must stay ≥ 0. */
  sign: 1 | -1;
  limit?: number;
  ttlMs?: number;
  kind: BudgetKind;
}

export interface Reservation {
  /** Settles to the real cost (which may be 0) and releases the rest. Call exactly once. */
  settle(actualMilli: number): Promise<void>;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10).replace(/-/g, '');
const utcMonth = (now: Date) => now.toISOString().slice(0, 7).replace('-', '');

export function budgetRefusal(kind: BudgetKind, message: string): ApiError {
  return new ApiError('budget_exhausted', message, { extra: { budget: kind }, headers: { 'x-should-retry': 'false' } });
}

export function createBudget(deps: { store: SharedStore; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());

  function countersFor(subject: BudgetSubject, balanceKnown: boolean): Counter[] {
    const at = now();
    const counters: Counter[] = [];
    if (subject.keyId && subject.dailyCapCredits !== undefined) {
      counters.push({ key: `spend:key:${subject.keyId}:d:${utcDay(at)}`, sign: 1, limit: subject.dailyCapCredits * MILLI, ttlMs: 2 * DAY_MS, kind: 'key_daily' });
    }
    if (subject.keyId && subject.monthlyCapCredits !== undefined) {
      counters.push({ key: `spend:key:${subject.keyId}:m:${utcMonth(at)}`, sign: 1, limit: subject.monthlyCapCredits * MILLI, ttlMs: 32 * DAY_MS, kind: 'key_monthly' });
    }
    if (balanceKnown) counters.push({ key: `credits:available:${subject.userId}`, sign: -1, kind: 'account' });
    return counters;
  }

  async function rollBack(applied: Array<{ counter: Counter; amount: number }>): Promise<void> {
    await Promise.all(applied.map(({ counter, amount }) => deps.store.incrBy(counter.key, -counter.sign * amount)));
  }

  return {
    /**
     * Reserves `worstCaseMilli` on every counter that applies, or refuses with 402 `budget_exhausted` naming
     * the budget that is spent (`fairUse` says the call would have been free under house-fast fair use).
     */
    async reserve(subject: BudgetSubject, worstCaseMilli: number, options: { fairUse?: boolean } = {}): Promise<Reservation> {
      const amount = Math.max(0, Math.ceil(worstCaseMilli));
      const balance = await deps.store.get(`credits:available:${subject.userId}`);
      const counters = countersFor(subject, balance !== null);
      const applied: Array<{ counter: Counter; amount: number }> = [];
      for (const counter of counters) {
        const value = await deps.store.incrBy(counter.key, counter.sign * amount, counter.ttlMs);
        applied.push({ counter, amount });
        const over = counter.sign === 1 ? value > (counter.limit ?? Infinity) : value < 0;
        // A call that costs nothing (BYO) is never refused; a priced call needs room for its worst case.
        if (over && amount > 0) {
          await rollBack(applied);
          const kind = counter.kind === 'account' && options.fairUse ? 'fair_use' : counter.kind;
          throw budgetRefusal(kind, messageFor(kind));
        }
      }
      let settled = false;
      return {
        async settle(actualMilli) {
          if (settled) return;
          settled = true;
          const actual = Math.max(0, Math.ceil(actualMilli));
          const delta = actual - amount;
          if (delta !== 0) await Promise.all(applied.map(({ counter }) => deps.store.incrBy(counter.key, counter.sign * delta)));
        },
      };
    },

    /** Whether `userId` still has house-fast fair use left in both windows. */
    async fairUseLeft(userId: string): Promise<boolean> {
      const at = now().getTime();
      const hour = Math.floor(at / HOUR_MS);
      const day = Math.floor(at / DAY_MS);
      const hourKeys = Array.from({ length: 5 }, (_, i) => `fair:${userId}:h:${hour - i}`);
      const dayKeys = Array.from({ length: 7 }, (_, i) => `fair:${userId}:d:${day - i}`);
      const values = await deps.store.getMany([...hourKeys, ...dayKeys]);
      const sum = (from: number, to: number) => values.slice(from, to).reduce((total, value) => total + Number(value ?? 0), 0);
      return sum(0, 5) < FAIR_USE_5H && sum(5, 12) < FAIR_USE_7D;
    },

    /** Counts free house-fast usage against both fair-use windows. */
    async recordFairUse(userId: string, milli: number): Promise<void> {
      if (milli <= 0) return;
      const at = now().getTime();
      const amount = Math.ceil(milli);
      await Promise.all([
        deps.store.incrBy(`fair:${userId}:h:${Math.floor(at / HOUR_MS)}`, amount, 6 * HOUR_MS),
        deps.store.incrBy(`fair:${userId}:d:${Math.floor(at / DAY_MS)}`, amount, 8 * DAY_MS),
      ]);
    },
  };
}

function messageFor(kind: BudgetKind): string {
  switch (kind) {
    case 'key_daily':
      return "This key's daily spend cap is reached; it resets at 00:00 UTC.";
    case 'key_monthly':
      return "This key's monthly spend cap is reached; it resets on the 1st (UTC).";
    case 'fair_use':
      return 'The house-fast fair-use allowance is spent and the account has no credits left to bill the call.';
    default:
      return 'The account has no credits left for this call.';
  }
}

export type Budget = ReturnType<typeof createBudget>;

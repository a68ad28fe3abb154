import { ApiError } from '@sbc/errors';
import type { SharedStore } from '@sbc/cache';
import type { ModelPrice } from '@sbc/catalog';
import { planReservation } from './reservation-plan';

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
  /** What was reserved, in millicredits: the most this call may be charged. */
  readonly reservedMilli: number;
  /** Settles to the real cost (which may be 0) and releases the rest. Call exactly once. */
  settle(actualMilli: number): Promise<void>;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10).replace(/-/g, '');
const utcMonth = (now: Date) => now.toISOString().slice(0, 7).replace('-', '');

export function budgetRefusal(kind: BudgetKind, message: string): ApiError {
  return new ApiError('budget_exhausted', message, { extra: { budget: kind }, headers: { 'x-should-retry': 'false' } });
}

/** What admission needs to know of a priced call. */
export interface CallCost {
  price: ModelPrice;
  inputTokens: { bound: number; count: () => number };
  requestedOutputTokens?: number;
  modelOutputTokens: number;
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

  const budget = {
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
        reservedMilli: amount,
        async settle(actualMilli) {
          if (settled) return;
          settled = true;
          const actual = Math.max(0, Math.ceil(actualMilli));
          const delta = actual - amount;
          if (delta !== 0) await Promise.all(applied.map(({ counter }) => deps.store.incrBy(counter.key, counter.sign * delta)));
        },
      };
    },

    /**
     * What the tightest budget that applies still allows, in millicredits, and which budget that is; no room
     * when none applies (no cap, and no balance published yet).
     */
    async room(subject: BudgetSubject): Promise<{ milli: number; kind: BudgetKind } | undefined> {
      const counters = countersFor(subject, true);
      const values = await deps.store.getMany(counters.map((counter) => counter.key));
      let tightest: { milli: number; kind: BudgetKind } | undefined;
      counters.forEach((counter, i) => {
        const value = values[i];
        if (counter.sign === -1 && (value === null || value === undefined)) return; // no balance published yet
        const current = Number(value ?? 0);
        const milli = counter.sign === 1 ? (counter.limit ?? Infinity) - current : current;
        if (!tightest || milli < tightest.milli) tightest = { milli, kind: counter.kind };
      });
      return tightest;
    },

    /**
     * Admits a priced call (README, "Admission"): reserves its worst case and says the output limit it runs
     * under. The prompt is bounded first by `inputTokens.bound` (cheap and never under the real count for
     * text), and only when that does not fit by `inputTokens.count()` (the local tokenizer). A caller's own
     * output limit is reserved as asked; without one, the call gets the model's limit or what the remaining
     * budget pays for, whichever is less. Parallel calls racing for the same room re-read it and try again.
     */
    async reserveCall(subject: BudgetSubject, call: CallCost, options: { fairUse?: boolean } = {}): Promise<{ reservation: Reservation; outputTokens: number }> {
      let inputTokens = call.inputTokens.bound;
      let counted = false;
      let racesLeft = 2;
      for (;;) {
        const room = call.requestedOutputTokens === undefined ? await budget.room(subject) : undefined;
        const plan = planReservation({
          price: call.price,
          inputTokens,
          requestedOutputTokens: call.requestedOutputTokens,
          modelOutputTokens: call.modelOutputTokens,
          roomMilli: room?.milli,
        });
        try {
          if (!plan) {
            const kind = room?.kind === 'account' && options.fairUse ? 'fair_use' : (room?.kind ?? 'account');
            throw budgetRefusal(kind, messageFor(kind));
          }
          return { reservation: await budget.reserve(subject, plan.worstCaseMilli, options), outputTokens: plan.outputTokens };
        } catch (error) {
          if (!(error instanceof ApiError && error.code === 'budget_exhausted')) throw error;
          if (!counted) {
            counted = true;
            inputTokens = Math.min(inputTokens, call.inputTokens.count());
          } else if (call.requestedOutputTokens !== undefined || racesLeft-- === 0) {
            throw error;
          }
        }
      }
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
  return budget;
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

import { ApiError } from '@sbc/errors';
import type { SharedStore, SlidingWindowResult, StoreOp } from '@sbc/cache';
import type { ModelPrice } from '@sbc/catalog';
import { millicredits, millicreditsFromCredits, type Millicredits } from '@sbc/money';
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

/** One credit in millicredits. */
export const MILLI = millicreditsFromCredits(1);
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const FAIR_USE_5H = millicreditsFromCredits(500);
const FAIR_USE_7D = millicreditsFromCredits(2_000);

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
  /** What was reserved: the most this call may be charged. */
  readonly reservedMilli: Millicredits;
  /** Settles to the real cost (which may be 0) and releases the rest. Call exactly once. */
  settle(actualMilli: number): Promise<void>;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10).replace(/-/g, '');
const utcMonth = (now: Date) => now.toISOString().slice(0, 7).replace('-', '');

function budgetRefusal(kind: BudgetKind, message: string): ApiError {
  return new ApiError('budget_exhausted', message, { extra: { budget: kind }, headers: { 'x-should-retry': 'false' } });
}

/** The caller's request bucket as a store operation, and how its result answers (headers, or a 429). */
export interface Bucket {
  op: StoreOp;
  answer(result: SlidingWindowResult): Record<string, string>;
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

  function countersFor(subject: BudgetSubject): Counter[] {
    const at = now();
    const counters: Counter[] = [];
    if (subject.keyId && subject.dailyCapCredits !== undefined) {
      const limit = millicreditsFromCredits(subject.dailyCapCredits);
      const key = `spend:key:${subject.keyId}:d:${utcDay(at)}`;
      counters.push({ key, sign: 1, limit, ttlMs: 2 * DAY_MS, kind: 'key_daily' });
    }
    if (subject.keyId && subject.monthlyCapCredits !== undefined) {
      const limit = millicreditsFromCredits(subject.monthlyCapCredits);
      const key = `spend:key:${subject.keyId}:m:${utcMonth(at)}`;
      counters.push({ key, sign: 1, limit, ttlMs: 32 * DAY_MS, kind: 'key_monthly' });
    }
    counters.push({ key: `credits:available:${subject.userId}`, sign: -1, kind: 'account' });
    return counters;
  }

  /** Takes back what a refused reservation added, in one round trip. */
  async function rollBack(applied: Counter[], amount: number): Promise<void> {
    if (applied.length === 0 || amount === 0) return;
    await deps.store.batch(
      applied.map((counter) => ({ op: 'incrBy' as const, key: counter.key, amount: -counter.sign * amount })),
    );
  }

  type Attempt = { reservation: Reservation } | { short: { kind: BudgetKind; roomMilli: number } };

  /**
   * One round trip: the request bucket (when given) and `amount` on every counter that applies, then a
   * check of each. A counter over its limit, or a refused bucket, takes everything back (a second trip, on
   * refusals only). A balance nobody has published yet is neither created nor enforced.
   */
  async function attempt(subject: BudgetSubject, amount: number, bucket: Bucket | undefined): Promise<Attempt> {
    const counters = countersFor(subject);
    const ops: StoreOp[] = bucket ? [bucket.op] : [];
    for (const counter of counters) {
      ops.push(
        counter.sign === 1
          ? { op: 'incrBy', key: counter.key, amount, ttlMs: counter.ttlMs }
          : { op: 'incrIfExists', key: counter.key, amount: -amount },
      );
    }
    const results = await deps.store.batch(ops);
    const applied: Counter[] = [];
    let short: { kind: BudgetKind; roomMilli: number } | undefined;
    counters.forEach((counter, i) => {
      const value = results[i + (bucket ? 1 : 0)] as number | null;
      if (value === null) return;
      applied.push(counter);
      const roomMilli = counter.sign === 1 ? (counter.limit ?? Infinity) - (value - amount) : value + amount;
      // A call that costs nothing (BYO) is never refused; a priced call needs room for its worst case.
      if (amount > 0 && roomMilli < amount && (!short || roomMilli < short.roomMilli))
        short = { kind: counter.kind, roomMilli };
    });
    try {
      bucket?.answer(results[0] as SlidingWindowResult);
    } catch (refusal) {
      await rollBack(applied, amount);
      throw refusal;
    }
    if (short) {
      await rollBack(applied, amount);
      return { short };
    }
    let settled = false;
    return {
      reservation: {
        reservedMilli: millicredits(amount),
        async settle(actualMilli) {
          if (settled) return;
          settled = true;
          const delta = Math.max(0, Math.ceil(actualMilli)) - amount;
          if (delta !== 0)
            await deps.store.batch(
              applied.map((counter) => ({ op: 'incrBy' as const, key: counter.key, amount: counter.sign * delta })),
            );
        },
      },
    };
  }

  /** A 402 naming the budget; `headers` (the request bucket's) go with it, as on every answer. */
  function refusalFor(kind: BudgetKind, fairUse: boolean | undefined, headers: Record<string, string> = {}): ApiError {
    const named = kind === 'account' && fairUse ? 'fair_use' : kind;
    const refusal = budgetRefusal(named, messageFor(named));
    Object.assign(refusal.headers, headers);
    return refusal;
  }

  const budget = {
    /**
     * Reserves `worstCaseMilli` on every counter that applies, or refuses with 402 `budget_exhausted` naming
     * the budget that is spent (`fairUse` says the call would have been free under house-fast fair use).
     */
    async reserve(
      subject: BudgetSubject,
      worstCaseMilli: number,
      options: { fairUse?: boolean } = {},
    ): Promise<Reservation> {
      const outcome = await attempt(subject, Math.max(0, Math.ceil(worstCaseMilli)), undefined);
      if ('short' in outcome) throw refusalFor(outcome.short.kind, options.fairUse);
      return outcome.reservation;
    },

    /**
     * Admits a priced call (README, "Admission"): reserves its worst case and says the output limit it runs
     * under, with the caller's request bucket hit in the same round trip when `bucket` is given (the
     * headers it answers with come back). The prompt is bounded first by `inputTokens.bound` (cheap and
     * never under the real count for text), and only when that does not fit by `inputTokens.count()` (the
     * local tokenizer). A caller's own output limit is reserved as asked; without one, the call asks for the
     * model's limit and, when that does not fit, for what the room the refusal reported pays for. Parallel
     * calls racing for the same room try again on what is left.
     */
    async reserveCall(
      subject: BudgetSubject,
      call: CallCost,
      options: { fairUse?: boolean; bucket?: Bucket } = {},
    ): Promise<{ reservation: Reservation; outputTokens: number; headers?: Record<string, string> }> {
      let inputTokens = call.inputTokens.bound;
      let counted = false;
      let roomMilli: number | undefined;
      let kind: BudgetKind = 'account';
      let bucket = options.bucket;
      let headers: Record<string, string> | undefined;
      for (let attempts = 0; ; attempts++) {
        const plan = planReservation({
          price: call.price,
          inputTokens,
          requestedOutputTokens: call.requestedOutputTokens,
          modelOutputTokens: call.modelOutputTokens,
          roomMilli,
        });
        if (plan) {
          const outcome = await attempt(
            subject,
            plan.worstCaseMilli,
            bucket && { ...bucket, answer: (result) => (headers = bucket!.answer(result)) },
          );
          bucket = undefined; // the request counts once, however many tries its reservation takes
          if ('reservation' in outcome)
            return { reservation: outcome.reservation, outputTokens: plan.outputTokens, headers };
          ({ kind, roomMilli } = outcome.short);
        } else if (bucket) {
          // Nothing fits, but the request still counts against its bucket.
          headers = bucket.answer((await deps.store.batch([bucket.op]))[0] as SlidingWindowResult);
          bucket = undefined;
        }
        if (!counted) {
          counted = true;
          inputTokens = Math.min(inputTokens, call.inputTokens.count());
        } else if (call.requestedOutputTokens !== undefined || !plan || attempts >= 4) {
          throw refusalFor(kind, options.fairUse, headers);
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
      const sum = (from: number, to: number) =>
        values.slice(from, to).reduce((total, value) => total + Number(value ?? 0), 0);
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

import { ApiError } from '@sbc/errors';
import type { PeriodWindow } from '@sbc/budget-periods';
import type { SharedStore, StoreOp } from '@sbc/cache';
import type { ModelPrice } from '@sbc/catalog';
import { millicredits, millicreditsFromCredits, type Millicredits } from '@sbc/money';
import {
  DEFAULT_COUNTER_LEASES,
  type CounterLeases,
  type LeasedCounter,
  type LeasedReservation,
} from './counter-leases';
import { fairUseIncrements, readFairUseLeft, type FairUseViews } from './fair-use';
import type { Bucket, TokenHold } from './rate-limit';
import { planReservation, worstCaseMilli } from './reservation-plan';
import { capRefusal, creditsText, messageFor, type BudgetKind } from './budget-refusals';
import { capCounter, memberOwner, type CapScope, type SpendCap, type TeamSpendCaps } from './team-caps';

/**
 * Spend caps and the account balance, held under concurrency: a call reserves its worst-case cost before it
 * is dispatched and settles to its real cost afterwards, so parallel calls cannot overshoot a cap together.
 *
 * Amounts are integer millicredits (1 credit = 1,000; 1 credit = $0.001) because the shared store's counters
 * are integers. Counters live in the shared store (Redis across replicas, memory embedded):
 * - `spend:key:<id>:d:<YYYYMMDD>` and `spend:key:<id>:m:<YYYYMM>`: what a key spent today / this month (UTC),
 *   so caps reset at 00:00 UTC and on the 1st;
 * - `spend:team:<team>:<period>:<zone>:<start>` and `spend:member:<team>:<user>:…`: what a team's keys, and
 *   one member's team keys, spent in the cap's current period (team-caps.ts), which starts at its boundary;
 * - `credits:available:<user>`: the account's spendable balance, published by the usage ledger. Until the
 *   ledger has published one for an account, its balance is not enforced here.
 * - `credits:held:<user>`: what calls in flight have reserved of that balance, so a refusal can say that the
 *   balance is committed rather than spent. It only informs messages: it expires an hour after it was made
 *   and a refusal reads it as at least zero, so a settle it missed cannot mislead for long.
 * - `fair:<user>:h:<hour>` and `fair:<user>:d:<day>`: house-fast credits used free of charge, for the
 *   500-per-5-hours and 2,000-per-7-days fair-use windows (fair-use.ts). With `fairUse` (the edge on Redis) they
 *   are read through this edge's view of the user and written in its background flush.
 * - `credits:leased:<user>`: there while an edge may hold a lease on the balance, so the usage ledger does not
 *   reconcile the balance under it (docs/leased-limits.md); it outlasts the lease, so a dead edge's lease is
 *   reconciled once it expires.
 *
 * With `leases` (the edge on Redis), a busy subject's counters are reserved from this edge's leases on them with
 * no round trip (docs/leased-limits.md): all of a call's counters or none, so near a cap, or for a balance the
 * ledger has not published, a call goes to the store exactly as before, and every refusal is the store's.
 */

/** One credit in millicredits. */
export const MILLI = millicreditsFromCredits(1);
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const HELD_TTL_MS = HOUR_MS;
/**
 * How long the ledger's marker of a balance lease lives after the lease's last take: twice the lease's own
 * lifetime, so it outlasts any lease a live edge holds, and a dead edge's is reconciled soon after.
 */
const LEASED_MARKER_TTL_MS = 2 * DEFAULT_COUNTER_LEASES.lifetimeMs;

export interface BudgetSubject {
  userId: string;
  keyId?: string;
  /** Whole credits; absent means no cap. */
  dailyCapCredits?: number;
  monthlyCapCredits?: number;
  /** A team key's team and member caps. */
  team?: TeamSpendCaps;
}

interface Counter extends LeasedCounter {
  key: string;
  /** +1 counters grow with spend and must stay ≤ limit; -1 counters shrink and must stay ≥ 0. */
  sign: 1 | -1;
  limit?: number;
  ttlMs?: number;
  /** What the refusal says when this counter is the one short. */
  refusal: () => string;
  kind: BudgetKind | 'held';
}

/** Why a reservation did not fit: the tightest counter and the room it had left. */
interface Shortfall {
  kind: BudgetKind;
  roomMilli: number;
  message: string;
  /** What calls in flight held of the balance when the account was short. */
  heldMilli: number;
}

export interface Reservation {
  /** What was reserved: the most this call may be charged. */
  readonly reservedMilli: Millicredits;
  /** The tokens its key's tokens-per-minute window counted with it, when the key has that limit. */
  readonly tokens?: TokenHold;
  /**
   * Settles to the real cost (which may be 0) and releases the rest, correcting the tokens window to
   * `actualTokens` in the same round trip when given. Call exactly once.
   */
  settle(actualMilli: number, actualTokens?: number): Promise<void>;
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10).replace(/-/g, '');
const utcMonth = (now: Date) => now.toISOString().slice(0, 7).replace('-', '');

function budgetRefusal(kind: BudgetKind, message: string): ApiError {
  return new ApiError('budget_exhausted', message, { extra: { budget: kind }, headers: { 'x-should-retry': 'false' } });
}

/** What admission needs to know of a priced call. */
export interface CallCost {
  price: ModelPrice;
  inputTokens: { bound: number; count: () => number };
  requestedOutputTokens?: number;
  modelOutputTokens: number;
}

export function createBudget(deps: {
  store: SharedStore;
  now?: () => Date;
  leases?: CounterLeases;
  fairUse?: FairUseViews;
}) {
  const now = deps.now ?? (() => new Date());

  function capCounterOf(scope: CapScope, owner: string, cap: SpendCap, at: Date): Counter {
    const { key, window } = capCounter(scope, owner, cap, at);
    // Kept a day past the period's end, so a late settle still finds it.
    const ttlMs = window.end.getTime() - at.getTime() + DAY_MS;
    const limit = millicreditsFromCredits(cap.credits);
    return { key, sign: 1, limit, ttlMs, kind: scope, refusal: () => capRefusal(scope, cap, window.end) };
  }

  function countersFor(subject: BudgetSubject): Counter[] {
    const at = now();
    const counters: Counter[] = [];
    if (subject.keyId && subject.dailyCapCredits !== undefined) {
      const limit = millicreditsFromCredits(subject.dailyCapCredits);
      const key = `spend:key:${subject.keyId}:d:${utcDay(at)}`;
      counters.push({
        key,
        sign: 1,
        limit,
        ttlMs: 2 * DAY_MS,
        kind: 'key_daily',
        refusal: () => messageFor('key_daily'),
      });
    }
    if (subject.keyId && subject.monthlyCapCredits !== undefined) {
      const limit = millicreditsFromCredits(subject.monthlyCapCredits);
      const key = `spend:key:${subject.keyId}:m:${utcMonth(at)}`;
      const refusal = () => messageFor('key_monthly');
      counters.push({ key, sign: 1, limit, ttlMs: 32 * DAY_MS, kind: 'key_monthly', refusal });
    }
    const team = subject.team;
    if (team?.member) counters.push(capCounterOf('member', memberOwner(team.teamId, subject.userId), team.member, at));
    if (team?.team) counters.push(capCounterOf('team', team.teamId, team.team, at));
    const account = () => messageFor('account');
    counters.push({
      key: `credits:available:${subject.userId}`,
      sign: -1,
      kind: 'account',
      refusal: account,
      withTake: () => [{ op: 'set', key: `credits:leased:${subject.userId}`, value: '1', ttlMs: LEASED_MARKER_TTL_MS }],
    });
    counters.push({
      key: `credits:held:${subject.userId}`,
      sign: 1,
      ttlMs: HELD_TTL_MS,
      kind: 'held',
      refusal: account,
    });
    return counters;
  }

  /** Takes back what a refused reservation added (and `also`), in one round trip. */
  async function rollBack(applied: Counter[], amount: number, also: StoreOp[] = []): Promise<void> {
    const ops: StoreOp[] =
      amount === 0 ? [] : applied.map((c) => ({ op: 'incrBy', key: c.key, amount: -c.sign * amount }));
    ops.push(...also);
    if (ops.length > 0) await deps.store.batch(ops);
  }

  type Attempt = { reservation: Reservation } | { short: Shortfall };

  /**
   * One round trip: the request bucket (when given) and `amount` on every counter that applies, then a
   * check of each. A counter over its limit, or a refused bucket, takes everything back (a second trip, on
   * refusals only). A balance nobody has published yet is neither created nor enforced.
   */
  async function attempt(
    subject: BudgetSubject,
    amount: number,
    bucket: { limits: Bucket; tokens: () => number; answered: (headers: Record<string, string>) => void } | undefined,
  ): Promise<Attempt> {
    const counters = countersFor(subject);
    const ops: StoreOp[] = bucket ? bucket.limits.ops(bucket.tokens) : [];
    // What calls in flight hold of the balance only informs refusals, which leases never make: not leased.
    const leased =
      deps.leases && amount > 0
        ? deps.leases.reserve(
            counters.filter((counter) => counter.kind !== 'held'),
            amount,
          )
        : undefined;
    if (leased) return leasedAttempt(leased, counters, ops, bucket);
    const offset = ops.length;
    for (const counter of counters) {
      ops.push(
        counter.sign === 1
          ? { op: 'incrBy', key: counter.key, amount, ttlMs: counter.ttlMs }
          : { op: 'incrIfExists', key: counter.key, amount: -amount },
      );
    }
    const results = await deps.store.batch(ops);
    const applied: Counter[] = [];
    let short: { counter: Counter; roomMilli: number } | undefined;
    let heldMilli = 0;
    counters.forEach((counter, i) => {
      const value = results[i + offset] as number | null;
      if (value === null) return;
      applied.push(counter);
      if (counter.kind === 'held') heldMilli = Math.max(0, value - amount);
      const roomMilli = counter.sign === 1 ? (counter.limit ?? Infinity) - (value - amount) : value + amount;
      // A call that costs nothing (BYO) is never refused; a priced call needs room for its worst case.
      if (amount > 0 && roomMilli < amount && (!short || roomMilli < short.roomMilli)) short = { counter, roomMilli };
    });
    const hit = bucket?.limits.answer(results.slice(0, offset));
    if (hit) bucket!.answered(hit.headers);
    if (hit?.refusal) {
      await rollBack(applied, amount, hit.undo);
      throw hit.refusal;
    }
    if (short) {
      await rollBack(applied, amount, hit?.tokens?.release() ?? []);
      const { counter, roomMilli } = short;
      return { short: { kind: counter.kind as BudgetKind, roomMilli, message: counter.refusal(), heldMilli } };
    }
    let settled = false;
    const tokens = hit?.tokens;
    return {
      reservation: {
        reservedMilli: millicredits(amount),
        tokens,
        async settle(actualMilli, actualTokens) {
          if (settled) return;
          settled = true;
          const delta = Math.max(0, Math.ceil(actualMilli)) - amount;
          // What the call held of the balance is released whatever it cost.
          const moves = applied.map((counter) => ({
            op: 'incrBy' as const,
            key: counter.key,
            amount: counter.kind === 'held' ? -amount : counter.sign * delta,
          }));
          const changed: StoreOp[] = moves.filter((move) => move.amount !== 0);
          const tokenOp = actualTokens === undefined ? undefined : tokens?.settleOp(actualTokens);
          if (tokenOp) changed.push(tokenOp);
          if (changed.length > 0) await deps.store.batch(changed);
        },
      },
    };
  }

  /**
   * A call reserved from leases: only a request bucket that was not leased itself (a key with a tokens limit)
   * takes a round trip, and a refusal of it gives the reservation back to the leases.
   */
  async function leasedAttempt(
    leased: LeasedReservation,
    counters: Counter[],
    bucketOps: StoreOp[],
    bucket: { limits: Bucket; answered: (headers: Record<string, string>) => void } | undefined,
  ): Promise<Attempt> {
    const leases = deps.leases!;
    const hit = bucket?.limits.answer(bucketOps.length === 0 ? [] : await deps.store.batch(bucketOps));
    if (hit) bucket!.answered(hit.headers);
    if (hit?.refusal) {
      const ops = [...leases.settle(leased, 0), ...hit.undo];
      if (ops.length > 0) await deps.store.batch(ops);
      throw hit.refusal;
    }
    const tokens = hit?.tokens;
    const { amount } = leased;
    let settled = false;
    return {
      reservation: {
        reservedMilli: millicredits(amount),
        tokens,
        async settle(actualMilli, actualTokens) {
          if (settled) return;
          settled = true;
          const charged = Math.max(0, Math.ceil(actualMilli));
          const ops = leases.settle(leased, charged);
          // Past what was reserved (a caller of `reserve` that charges more): counted in the store, as per call.
          if (charged > amount)
            for (const counter of counters)
              if (counter.kind !== 'held')
                ops.push(
                  counter.sign === 1
                    ? { op: 'incrBy', key: counter.key, amount: charged - amount }
                    : { op: 'incrIfExists', key: counter.key, amount: amount - charged },
                );
          const tokenOp = actualTokens === undefined ? undefined : tokens?.settleOp(actualTokens);
          if (tokenOp) ops.push(tokenOp);
          if (ops.length > 0) await deps.store.batch(ops);
        },
      },
    };
  }

  /**
   * A 402 naming the budget; `headers` (the request bucket's) go with it, as on every answer. An account short
   * of room says how much calls in flight hold of it and what this call needed (`neededMilli`), since a
   * balance that shows credits left is otherwise a puzzle.
   */
  function refusalFor(
    short: Shortfall,
    fairUse: boolean | undefined,
    need: { neededMilli: number; outputLimitField?: string; promptAlone?: boolean },
    headers: Record<string, string> = {},
  ): ApiError {
    const named = short.kind === 'account' && fairUse ? 'fair_use' : short.kind;
    let message = named === 'fair_use' ? messageFor('fair_use') : short.message;
    if (short.kind === 'account' && (short.heldMilli > 0 || short.roomMilli > 0)) {
      const needs = `this call's worst case needs ${creditsText(need.neededMilli)}`;
      const lower = need.outputLimitField
        ? ` Setting ${need.outputLimitField} lowers it.`
        : need.promptAlone
          ? ' Its prompt alone needs more than that; a shorter prompt lowers it.'
          : '';
      message =
        (short.heldMilli > 0
          ? `Calls in flight have reserved ${creditsText(short.heldMilli)} credits of the account's balance, leaving ` +
            `${creditsText(short.roomMilli)}; ${needs}.`
          : `The account has ${creditsText(short.roomMilli)} credits left; ${needs}.`) + lower;
    }
    const refusal = budgetRefusal(named, message);
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
      const amount = Math.max(0, Math.ceil(worstCaseMilli));
      const outcome = await attempt(subject, amount, undefined);
      if ('short' in outcome) throw refusalFor(outcome.short, options.fairUse, { neededMilli: amount });
      return outcome.reservation;
    },

    /**
     * Admits a priced call (README, "Admission"): reserves its worst case and says the output limit it runs
     * under, with the caller's request bucket hit in the same round trip when `bucket` is given (the
     * headers it answers with come back). The prompt is bounded first by `inputTokens.bound` (cheap and
     * never under the real count for text), and only when that does not fit by `inputTokens.count()` (the
     * local tokenizer). A caller's own output limit is reserved as asked; without one, the call asks for the
     * model's limit and, when that does not fit, for what the room the refusal reported pays for. Parallel
     * calls racing for the same room try again on what is left. A key's tokens-per-minute window counts the
     * prompt (by the tokenizer) and the output limit of the first try; the reservation's settle corrects it.
     */
    async reserveCall(
      subject: BudgetSubject,
      call: CallCost,
      options: { fairUse?: boolean; bucket?: Bucket; outputLimitField?: string } = {},
    ): Promise<{ reservation: Reservation; outputTokens: number; headers?: Record<string, string> }> {
      let inputTokens = call.inputTokens.bound;
      let counted = false;
      let short: Shortfall = { kind: 'account', roomMilli: 0, message: messageFor('account'), heldMilli: 0 };
      let roomMilli: number | undefined;
      let neededMilli = 0;
      let bucket = options.bucket;
      let headers: Record<string, string> | undefined;
      const answered = (given: Record<string, string>) => (headers = given);
      for (let attempts = 0; ; attempts++) {
        const plan = planReservation({
          price: call.price,
          inputTokens,
          requestedOutputTokens: call.requestedOutputTokens,
          modelOutputTokens: call.modelOutputTokens,
          roomMilli,
        });
        if (plan) {
          const outputTokens = plan.outputTokens;
          const tokens = () => call.inputTokens.count() + outputTokens;
          neededMilli = plan.worstCaseMilli;
          const outcome = await attempt(subject, plan.worstCaseMilli, bucket && { limits: bucket, tokens, answered });
          bucket = undefined; // the request counts once, however many tries its reservation takes
          if ('reservation' in outcome) return { reservation: outcome.reservation, outputTokens, headers };
          short = outcome.short;
          roomMilli = short.roomMilli;
        } else {
          // Not one output token fits: the prompt alone is past the room.
          neededMilli = worstCaseMilli(call.price, inputTokens, 1);
          if (bucket) {
            // Nothing fits, but the request still counts against its bucket.
            const hit = bucket.answer(await deps.store.batch(bucket.ops(() => 0)));
            answered(hit.headers);
            bucket = undefined;
            if (hit.refusal) {
              if (hit.undo.length > 0) await deps.store.batch(hit.undo);
              throw hit.refusal;
            }
          }
        }
        if (!counted) {
          counted = true;
          inputTokens = Math.min(inputTokens, call.inputTokens.count());
        } else if (call.requestedOutputTokens !== undefined || !plan || attempts >= 4) {
          const field = call.requestedOutputTokens !== undefined ? options.outputLimitField : undefined;
          throw refusalFor(
            short,
            options.fairUse,
            { neededMilli, outputLimitField: field, promptAlone: !plan },
            headers,
          );
        }
      }
    },

    /**
     * What each cap has spent in its current period (reservations of calls in flight included), in one round
     * trip: for the team and member resources' `spent`.
     */
    async capSpend(
      caps: readonly { scope: CapScope; owner: string; cap: SpendCap }[],
    ): Promise<{ spentMilli: number; window: PeriodWindow }[]> {
      const at = now();
      const counters = caps.map(({ scope, owner, cap }) => capCounter(scope, owner, cap, at));
      const values = await deps.store.getMany(counters.map((counter) => counter.key));
      return counters.map((counter, i) => ({
        spentMilli: Math.max(0, Number(values[i] ?? 0)),
        window: counter.window,
      }));
    },

    /** Whether `userId` still has house-fast fair use left in both windows. */
    async fairUseLeft(userId: string): Promise<boolean> {
      const at = now().getTime();
      return deps.fairUse ? deps.fairUse.left(userId, at) : readFairUseLeft(deps.store, userId, at);
    },

    /** Counts free house-fast usage against both fair-use windows. */
    async recordFairUse(userId: string, milli: number): Promise<void> {
      if (milli <= 0) return;
      const at = now().getTime();
      if (deps.fairUse) await deps.fairUse.record(userId, milli, at);
      else await deps.store.batch(fairUseIncrements(userId, at, Math.ceil(milli)));
    },
  };
  return budget;
}

export type Budget = ReturnType<typeof createBudget>;

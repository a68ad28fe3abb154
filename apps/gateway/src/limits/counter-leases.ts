import type { CounterLeaseResult, SharedStore, StoreOp } from '@sbc/cache';
import type { Logger } from '@sbc/logging';

/**
 * This edge's leases on the budget's shared counters (docs/leased-limits.md): spend caps that count up to a limit
 * and the account balance that counts down to zero. A busy counter's room is taken from Redis a slice at a time
 * and a call's worst case is reserved from the slice here, with no round trip; its settle gives the unspent part
 * back to the slice.
 *
 * A call is served from leases only when every counter it needs has one covering its whole worst case; otherwise
 * it goes to the store as before (and starts the takes it lacked, in the background). A slice is sized from this
 * edge's recent spend on the counter, never more than a share of the room, and none at all when that is under a
 * few calls' worst case: near a cap every call goes to the store, which shares the last credits exactly. What a
 * lease has not reserved goes back when it is idle, when it has lived its time, and when the edge stops.
 */
export interface CounterLeaseOptions {
  /** How long a slice should last at the recent rate. */
  horizonMs: number;
  /** The smallest slice worth taking, in the largest recent worst cases of a call. */
  minCalls: number;
  /** One take gets at most 1/share of the room left. */
  share: number;
  /** Calls within `rateMs` before a counter is worth a lease. */
  minHits: number;
  rateMs: number;
  /** A lease unused this long is given back. */
  idleMs: number;
  /**
   * A lease is given back this long after its last take, busy or not; a busy one is topped up before then, which
   * starts its time again (and a balance lease's marker for the ledger, whose own expiry outlasts it).
   */
  lifetimeMs: number;
  /** After the store grants nothing, no new take is tried for this long. */
  backoffMs: number;
}

export const DEFAULT_COUNTER_LEASES: CounterLeaseOptions = {
  horizonMs: 1_000,
  minCalls: 8,
  share: 4,
  minHits: 8,
  rateMs: 1_000,
  // Short: a balance at rest reads exact soon after its last call, before the ledger's quiet-account checks.
  idleMs: 300,
  lifetimeMs: 2_000,
  backoffMs: 1_000,
};

/** A counter a call reserves on, as the budget names it. */
export interface LeasedCounter {
  key: string;
  /** 1: counts spend up to `limit`; -1: a balance, counting down to zero. */
  sign: 1 | -1;
  limit?: number;
  ttlMs?: number;
  /** Store operations to run alongside a take of this counter (the ledger's marker of a balance lease). */
  withTake?: () => StoreOp[];
}

interface Lease {
  granted: number;
  left: number;
  expiresAt: number;
  open: boolean;
}

interface Counter {
  spec: LeasedCounter;
  lease?: Lease;
  lastUsed: number;
  /** Units asked in the rate period that began at `since`, its calls, the largest call; the rate before. */
  units: number;
  calls: number;
  largest: number;
  since: number;
  rate: number;
  callsBefore: number;
  largestBefore: number;
  taking: boolean;
  noTakeUntil: number;
}

/** A call's worst case reserved from leases: settle it with `settle`, once. */
export interface LeasedReservation {
  readonly amount: number;
  readonly leases: readonly { counter: Counter; lease: Lease }[];
}

export interface CounterLeases {
  /** Reserves `amount` on every one of `counters` from this edge's leases, or undefined (go to the store). */
  reserve(counters: readonly LeasedCounter[], amount: number): LeasedReservation | undefined;
  /**
   * Settles a leased reservation to `charged` (at most its amount): the rest goes back to each lease still open.
   * Answers the store operations for leases already given back, which the caller runs.
   */
  settle(reservation: LeasedReservation, charged: number): StoreOp[];
  /** Gives every lease back (on drain and shutdown); reservations after it go to the store. */
  close(): Promise<void>;
}

export function createCounterLeases(deps: {
  store: SharedStore;
  logger: Logger;
  options?: Partial<CounterLeaseOptions>;
  /** Monotonic ms; injectable for tests. */
  now?: () => number;
}): CounterLeases {
  const options = { ...DEFAULT_COUNTER_LEASES, ...deps.options };
  const now = deps.now ?? (() => performance.now());
  const counters = new Map<string, Counter>();
  let closed = false;

  /** Moves `amount` back into the counter in the store: off a cap's spend, onto a balance. */
  const giveBackOp = (spec: LeasedCounter, amount: number): StoreOp =>
    spec.sign === 1
      ? { op: 'incrBy', key: spec.key, amount: -amount }
      : { op: 'incrIfExists', key: spec.key, amount: amount };

  function giveBack(ops: StoreOp[]): void {
    if (ops.length === 0) return;
    deps.store.batch(ops).catch((err: unknown) => deps.logger.warn({ err }, 'returning a budget lease failed'));
  }

  /** Closes a lease: later settles of its reservations go to the store; its unreserved rest goes back now. */
  function close(counter: Counter, lease: Lease): StoreOp | undefined {
    lease.open = false;
    if (counter.lease === lease) counter.lease = undefined;
    const left = lease.left;
    lease.left = 0;
    return left > 0 ? giveBackOp(counter.spec, left) : undefined;
  }

  function take(counter: Counter, at: number): void {
    if (closed || counter.taking || at < counter.noTakeUntil) return;
    const largest = Math.max(counter.largest, counter.largestBefore);
    if (largest <= 0) return;
    const rate = Math.max(counter.rate, counter.units / Math.max(1, at - counter.since));
    const min = largest * options.minCalls;
    const want = Math.max(min, Math.ceil(rate * options.horizonMs));
    const { spec } = counter;
    const ops: StoreOp[] = [
      ...(spec.withTake?.() ?? []),
      {
        op: 'counterLease',
        key: spec.key,
        lease: { sign: spec.sign, limit: spec.limit, ttlMs: spec.ttlMs, want, min, share: options.share },
      },
    ];
    counter.taking = true;
    deps.store.batch(ops).then(
      (results) => taken(counter, results.at(-1) as CounterLeaseResult, now()),
      (err: unknown) => {
        counter.taking = false;
        counter.noTakeUntil = now() + options.backoffMs;
        deps.logger.warn({ err }, 'taking a budget lease failed');
      },
    );
  }

  function taken(counter: Counter, answer: CounterLeaseResult, at: number): void {
    counter.taking = false;
    if (answer.granted === 0) {
      counter.noTakeUntil = at + options.backoffMs;
      return;
    }
    // The edge stopped, or the counter was forgotten, while the take was on its way: nothing may spend it.
    if (closed || counters.get(counter.spec.key) !== counter) {
      giveBack([giveBackOp(counter.spec, answer.granted)]);
      return;
    }
    const lease = counter.lease;
    if (lease) {
      lease.granted = lease.left + answer.granted;
      lease.left += answer.granted;
      lease.expiresAt = at + options.lifetimeMs;
      return;
    }
    counter.lease = { granted: answer.granted, left: answer.granted, expiresAt: at + options.lifetimeMs, open: true };
  }

  function counterFor(spec: LeasedCounter, at: number): Counter {
    let counter = counters.get(spec.key);
    if (counter && (counter.spec.sign !== spec.sign || counter.spec.limit !== spec.limit)) {
      // A cap changed: its lease was sized for the old one.
      const op = counter.lease && close(counter, counter.lease);
      if (op) giveBack([op]);
      counters.delete(spec.key);
      counter = undefined;
    }
    if (!counter) {
      counter = {
        spec,
        lastUsed: at,
        units: 0,
        calls: 0,
        largest: 0,
        since: at,
        rate: 0,
        callsBefore: 0,
        largestBefore: 0,
        taking: false,
        noTakeUntil: 0,
      };
      counters.set(spec.key, counter);
    }
    return counter;
  }

  function countDemand(counter: Counter, at: number, amount: number): void {
    counter.lastUsed = at;
    if (at - counter.since >= options.rateMs) {
      const recent = at - counter.since < 2 * options.rateMs;
      counter.rate = counter.units / (at - counter.since);
      counter.callsBefore = recent ? counter.calls : 0;
      counter.largestBefore = recent ? counter.largest : 0;
      counter.units = 0;
      counter.calls = 0;
      counter.largest = 0;
      counter.since = at;
    }
    counter.units += amount;
    counter.calls += 1;
    counter.largest = Math.max(counter.largest, amount);
  }

  const usable = (lease: Lease | undefined, at: number, amount: number): lease is Lease =>
    lease !== undefined && at < lease.expiresAt && lease.left >= amount;

  // Idle and old leases are given back; counters nobody uses are forgotten.
  const sweep = setInterval(
    () => {
      const at = now();
      const ops: StoreOp[] = [];
      for (const counter of counters.values()) {
        const lease = counter.lease;
        if (lease && (at >= lease.expiresAt || at - counter.lastUsed >= options.idleMs)) {
          const op = close(counter, lease);
          if (op) ops.push(op);
        }
        if (!counter.lease && !counter.taking && at - counter.lastUsed >= options.idleMs)
          counters.delete(counter.spec.key);
      }
      giveBack(ops);
    },
    Math.max(10, Math.floor(options.idleMs / 2)),
  );
  sweep.unref();

  return {
    reserve(specs, amount) {
      if (closed || specs.length === 0) return undefined;
      const at = now();
      const found: Counter[] = [];
      let covered = true;
      for (const spec of specs) {
        const counter = counterFor(spec, at);
        countDemand(counter, at, amount);
        found.push(counter);
        if (!usable(counter.lease, at, amount)) covered = false;
      }
      if (!covered) {
        for (const counter of found) {
          const busy = counter.calls >= options.minHits || counter.callsBefore >= options.minHits;
          if (busy && !usable(counter.lease, at, amount)) take(counter, at);
        }
        return undefined;
      }
      const leases = found.map((counter) => {
        const lease = counter.lease!;
        lease.left -= amount;
        // Ahead of need: the next slice is on its way while a quarter of this one, or of its time, is left.
        if (lease.left * 4 < lease.granted || (lease.expiresAt - at) * 4 < options.lifetimeMs) take(counter, at);
        return { counter, lease };
      });
      return { amount, leases };
    },

    settle(reservation, charged) {
      const back = reservation.amount - Math.max(0, Math.min(charged, reservation.amount));
      const ops: StoreOp[] = [];
      if (back === 0) return ops;
      for (const { counter, lease } of reservation.leases) {
        if (lease.open) lease.left += back;
        else ops.push(giveBackOp(counter.spec, back));
      }
      return ops;
    },

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      const ops: StoreOp[] = [];
      for (const counter of counters.values()) {
        const op = counter.lease && close(counter, counter.lease);
        if (op) ops.push(op);
      }
      counters.clear();
      if (ops.length > 0)
        await deps.store
          .batch(ops)
          .catch((err: unknown) => deps.logger.warn({ err }, 'returning budget leases failed'));
    },
  };
}

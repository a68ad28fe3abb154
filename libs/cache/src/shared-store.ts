import {
  leaseGrant,
  validateWindowLease,
  validateWindowOptions,
  type SlidingWindowOptions,
  type SlidingWindowResult,
  type WindowLeaseOptions,
  type WindowLeaseResult,
} from './sliding-window';

/**
 * State shared by every edge replica: counters, rate-limit windows and small cached strings. Redis in the
 * services mode, a Map in embedded mode; both pass one contract suite (shared-store.test.ts), so callers never
 * branch on which one they hold.
 */
export interface SharedStore {
  get(key: string): Promise<string | null>;
  /** `ttlMs`, when given, must be positive; without it the value lives until deleted. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  /**
   * Atomically adds an integer `amount` (may be negative) and returns the new value. `ttlMs` is applied only
   * when this call creates the key, so a counter's expiry is fixed by its first increment (a budget period),
   * not pushed back by every hit.
   */
  incrBy(key: string, amount: number, ttlMs?: number): Promise<number>;
  /** Values in the order of `keys`; `null` for a missing or expired key. */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  /** One atomic check-and-count against a sliding window; a refused hit is not counted. */
  slidingWindowHit(key: string, options: SlidingWindowOptions): Promise<SlidingWindowResult>;
  /**
   * Several operations in one round trip (a Redis pipeline), in order, each atomic on its own key (so the
   * batch stays valid on Redis Cluster); results in the order of `ops`. The model path spends one round
   * trip on its request bucket and its budget reservation together this way.
   */
  batch(ops: readonly StoreOp[]): Promise<StoreOpResult[]>;
  close(): Promise<void>;
}

/**
 * One operation of a batch: `incrBy` as the method of that name; `incrIfExists` adds only to a key that
 * exists (null otherwise: a balance nobody has published yet is not created by spending from it);
 * `window` is `slidingWindowHit`; `windowAdjust` corrects a window's latest count by `amount` (see adjustWindow)
 * and answers null. `windowLease` takes a slice of a window's room at once, to be spent by one edge without a
 * round trip (docs/leased-limits.md); `windowReturn` gives back `amount` of a slice taken in `cell`, and answers
 * null. `counterLease` does the same for a counter with a limit (see CounterLeaseOptions); what is unspent goes
 * back with `incrBy` (or `incrIfExists`, for a counter that counts down). `set` is the method of that name, with
 * an expiry, and answers null.
 */
export type StoreOp =
  | { op: 'incrBy'; key: string; amount: number; ttlMs?: number }
  | { op: 'incrIfExists'; key: string; amount: number }
  | { op: 'window'; key: string; options: SlidingWindowOptions }
  | { op: 'windowAdjust'; key: string; windowMs: number; amount: number }
  | { op: 'windowLease'; key: string; lease: WindowLeaseOptions }
  | { op: 'windowReturn'; key: string; windowMs: number; cell: number; amount: number }
  | { op: 'counterLease'; key: string; lease: CounterLeaseOptions }
  | { op: 'set'; key: string; value: string; ttlMs: number };

export type StoreOpResult = number | null | SlidingWindowResult | WindowLeaseResult | CounterLeaseResult;

/**
 * A lease on an integer counter: one that counts up to `limit` (`sign` 1, a spend cap; created with `ttlMs` when
 * absent) or down to zero (`sign` -1, a balance; never created: an absent one has no lease). The grant is up to
 * `want`, at most a `share`-th of the room, and none when that is under `min`; it is added to (or taken off) the
 * counter in the same atomic step, as a reservation of that size would be.
 */
export interface CounterLeaseOptions {
  sign: 1 | -1;
  /** Required when `sign` is 1. */
  limit?: number;
  want: number;
  min: number;
  share: number;
  ttlMs?: number;
}

export interface CounterLeaseResult {
  granted: number;
  /** False for a counting-down counter nobody has published: nothing was granted or created. */
  present: boolean;
}

/** The grant of a counter lease at `value`; keep in step with COUNTER_LEASE_LUA. */
export function counterLeaseGrant(options: CounterLeaseOptions, value: number): number {
  const room = options.sign === 1 ? options.limit! - value : value;
  return leaseGrant(room, options.want, options.min, options.share);
}

function validateCounterLease(options: CounterLeaseOptions): void {
  if (options.sign !== 1 && options.sign !== -1) throw new RangeError(`sign must be 1 or -1, got ${options.sign}`);
  if (options.sign === 1) validateAmount(options.limit ?? NaN);
  for (const name of ['want', 'min', 'share'] as const) {
    const value = options[name];
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  validateTtl(options.ttlMs);
}

/** Shared validation so both adapters refuse the same inputs with the same message. */
export function validateTtl(ttlMs: number | undefined): number | undefined {
  if (ttlMs === undefined) return undefined;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`ttlMs must be a positive number, got ${ttlMs}`);
  return Math.ceil(ttlMs); // Redis PX takes whole milliseconds
}

/** Checks every operation of a batch before any runs, so a malformed one cannot leave it half applied. */
export function validateOps(ops: readonly StoreOp[]): void {
  for (const op of ops) {
    if (op.op === 'window') validateWindowOptions(op.options);
    else if (op.op === 'windowLease') validateWindowLease(op.lease);
    else if (op.op === 'counterLease') validateCounterLease(op.lease);
    else if (op.op === 'set') {
      if (validateTtl(op.ttlMs) === undefined) throw new RangeError('a set in a batch needs a ttlMs');
    } else if (op.op === 'windowReturn') {
      validateWindowOptions({ limit: 1, windowMs: op.windowMs });
      validateAmount(op.cell);
      validateAmount(op.amount);
    } else if (op.op === 'windowAdjust') {
      validateWindowOptions({ limit: 1, windowMs: op.windowMs });
      validateAmount(op.amount);
    } else {
      validateAmount(op.amount);
      if (op.op === 'incrBy') validateTtl(op.ttlMs);
    }
  }
}

export function validateAmount(amount: number): number {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount must be a safe integer, got ${amount}`);
  return amount;
}

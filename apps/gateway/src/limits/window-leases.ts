import type { SharedStore, StoreOp, WindowLeaseResult } from '@sbc/cache';
import type { Logger } from '@sbc/logging';

/**
 * This edge's leases on shared sliding windows (docs/leased-limits.md): a busy window's hits are taken from Redis
 * a slice at a time and spent here with no round trip; a window used now and then is hit per call as before.
 *
 * At most one lease per window, and one per part of it (a batch's share, met with a lower limit). A call takes a hit
 * from it only when the lease covers its whole cost, inside the cell the lease was counted in; otherwise `hit`
 * answers undefined and the caller goes to the store. A lease running low, or demand with no lease, starts a take in
 * the background (one at a time per window), sized from this edge's recent rate on the window and never more than a
 * share of the room left. What a lease has not spent is given back when it is idle, when its cell ends, and when
 * the edge stops.
 *
 * A call that hits several windows (a key's request bucket and its tokens window) takes from all their leases or
 * from none (`hitAll`), and a hit whose real cost is known later (a call's tokens) is corrected on its lease.
 */
export interface WindowLeaseOptions {
  /** How long a slice should last at the recent rate. */
  horizonMs: number;
  /**
   * The smallest slice worth taking, in hits (or, for a window sized in calls, in its largest recent calls); below
   * it the window is near its limit and calls go per call.
   */
  minSlice: number;
  /** One lease takes at most this fraction of a window's limit (its bound over the limit, per edge). */
  maxShareOfLimit: number;
  /** One take gets at most 1/share of the room left. */
  share: number;
  /** Calls within `rateMs` before a window is worth a lease (calls, not units: one costly call is not demand). */
  minHits: number;
  rateMs: number;
  /** A lease unused this long is given back. */
  idleMs: number;
  /** After the store grants nothing, no new take is tried for this long. */
  backoffMs: number;
}

const DEFAULT_WINDOW_LEASES: WindowLeaseOptions = {
  horizonMs: 1_000,
  minSlice: 8,
  maxShareOfLimit: 1 / 32,
  share: 4,
  minHits: 8,
  rateMs: 1_000,
  idleMs: 1_000,
  backoffMs: 1_000,
};

/** What a hit served from a lease answers, for the `x-ratelimit-*` headers. */
export interface LeasedHit {
  limit: number;
  /** The room as this edge knows it: the store's at the last take, plus what this lease has left. */
  remaining: number;
  resetMs: number;
}

/** One window a call hits, for `hitAll`. */
export interface WindowHit {
  key: string;
  limit: number;
  windowMs: number;
  cost: number;
  /**
   * How a slice is sized: in hits (a request bucket: at least `minSlice`, at most the larger of that and
   * `maxShareOfLimit` of the limit), or in calls (a tokens window, whose calls differ widely: at least `minSlice`
   * of its largest recent calls, at most `maxShareOfLimit` of the limit, and no lease when that is less).
   */
  sizing?: 'hits' | 'calls';
  /**
   * A lower limit some callers meet in the same window (a batch's share of its parent's): its lease is its own,
   * taken with that limit, so calls under either limit keep their lease and count in the one window.
   */
  part?: string;
}

/** A hit served from a lease whose cost may be corrected once it is known. */
export interface CorrectableHit extends LeasedHit {
  /**
   * Corrects the hit to `cost` units: on its lease while this edge holds it, else the store operation to run
   * (what was not used back to the cell it was counted in, what was used past it onto the window).
   */
  correct(cost: number): StoreOp | undefined;
}

interface Lease {
  cell: number;
  granted: number;
  left: number;
  /** The room the store reported for everyone else at the last take. */
  remainingAtTake: number;
  /** When the cell it was counted in ends, on this edge's monotonic clock. */
  endsAt: number;
}

interface Window {
  key: string;
  /** The window's entry here: its key, and the part of it when there is one. */
  entry: string;
  limit: number;
  windowMs: number;
  sizing: 'hits' | 'calls';
  lease?: Lease;
  lastUsed: number;
  /**
   * Units hit in the rate period that began at `since` and the calls that hit them; the rate (units per ms) and
   * the calls of the period before.
   */
  hits: number;
  calls: number;
  /** The largest cost of one call in the period, and in the period before. */
  largest: number;
  largestBefore: number;
  since: number;
  rate: number;
  callsBefore: number;
  taking: boolean;
  noTakeUntil: number;
}

export interface WindowLeases {
  /**
   * Takes `cost` hits of the window at `key` from this edge's lease, or undefined (go to the store). `part` names a
   * lower limit some callers meet in the same window (`WindowHit.part`).
   */
  hit(key: string, limit: number, windowMs: number, cost: number, part?: string): LeasedHit | undefined;
  /** Takes each hit from this edge's lease on its window when every one of them is covered, else none. */
  hitAll(hits: readonly WindowHit[]): CorrectableHit[] | undefined;
  /** Gives every lease back (on drain and shutdown); hits after it go to the store. */
  close(): Promise<void>;
}

export function createWindowLeases(deps: {
  store: SharedStore;
  logger: Logger;
  options?: Partial<WindowLeaseOptions>;
  /** Monotonic ms; injectable for tests. */
  now?: () => number;
}): WindowLeases {
  const options = { ...DEFAULT_WINDOW_LEASES, ...deps.options };
  const now = deps.now ?? (() => performance.now());
  const windows = new Map<string, Window>();
  let closed = false;

  /** Gives a lease's rest back to its cell, in the background; a lost return only errs towards refusing. */
  function giveBack(ops: StoreOp[]): void {
    if (ops.length === 0) return;
    deps.store.batch(ops).catch((err: unknown) => deps.logger.warn({ err }, 'returning a rate-limit lease failed'));
  }

  function returnOp(window: Window, lease: Lease): StoreOp | undefined {
    if (lease.left <= 0) return undefined;
    const op: StoreOp = {
      op: 'windowReturn',
      key: window.key,
      windowMs: window.windowMs,
      cell: lease.cell,
      amount: lease.left,
    };
    lease.left = 0;
    return op;
  }

  /** The slice to ask for and the least worth taking; undefined when a window's calls are too large to lease. */
  function sliceWanted(window: Window, at: number): { want: number; min: number } | undefined {
    const periodRate = window.hits / Math.max(1, at - window.since);
    const rate = Math.max(window.rate, periodRate);
    const share = Math.floor(window.limit * options.maxShareOfLimit);
    let min = options.minSlice;
    let most = Math.max(min, share);
    if (window.sizing === 'calls') {
      min = options.minSlice * Math.max(1, window.largest, window.largestBefore);
      most = share;
      if (min > most) return undefined;
    }
    return { want: Math.min(most, Math.max(min, Math.ceil(rate * options.horizonMs))), min };
  }

  function take(window: Window, at: number): void {
    if (closed || window.taking || at < window.noTakeUntil) return;
    const slice = sliceWanted(window, at);
    if (!slice) return;
    window.taking = true;
    const op: StoreOp = {
      op: 'windowLease',
      key: window.key,
      lease: { limit: window.limit, windowMs: window.windowMs, ...slice, share: options.share },
    };
    // Sent after the hit that asked for it has gone to the store, so the room the take reports counts that hit
    // and the headers answered from the lease stay exact on one edge.
    setImmediate(() =>
      deps.store.batch([op]).then(
        ([answer]) => taken(window, answer as WindowLeaseResult, now()),
        (err: unknown) => {
          window.taking = false;
          window.noTakeUntil = now() + options.backoffMs;
          deps.logger.warn({ err }, 'taking a rate-limit lease failed');
        },
      ),
    );
  }

  function taken(window: Window, answer: WindowLeaseResult, at: number): void {
    window.taking = false;
    if (answer.granted === 0) {
      window.noTakeUntil = at + options.backoffMs;
      return;
    }
    const lease = window.lease;
    // A window dropped (idle) or the edge stopped while the take was on its way: nothing may spend it.
    if (closed || windows.get(window.entry) !== window) {
      giveBack([
        { op: 'windowReturn', key: window.key, windowMs: window.windowMs, cell: answer.cell, amount: answer.granted },
      ]);
      return;
    }
    if (lease && lease.cell === answer.cell) {
      lease.granted = lease.left + answer.granted;
      lease.left += answer.granted;
      lease.remainingAtTake = answer.remaining;
      return;
    }
    const old = lease && returnOp(window, lease);
    if (old) giveBack([old]);
    window.lease = {
      cell: answer.cell,
      granted: answer.granted,
      left: answer.granted,
      remainingAtTake: answer.remaining,
      endsAt: at + answer.resetMs,
    };
  }

  function countHit(window: Window, at: number, cost: number): void {
    window.lastUsed = at;
    if (at - window.since >= options.rateMs) {
      window.rate = window.hits / (at - window.since);
      window.callsBefore = at - window.since < 2 * options.rateMs ? window.calls : 0;
      window.largestBefore = at - window.since < 2 * options.rateMs ? window.largest : 0;
      window.hits = 0;
      window.calls = 0;
      window.largest = 0;
      window.since = at;
    }
    window.hits += cost;
    window.calls += 1;
    window.largest = Math.max(window.largest, cost);
  }

  // Idle leases and leases whose cell has ended are given back; windows nobody hits are forgotten.
  const sweep = setInterval(
    () => {
      const at = now();
      const ops: StoreOp[] = [];
      for (const window of windows.values()) {
        const lease = window.lease;
        if (lease && (at >= lease.endsAt || at - window.lastUsed >= options.idleMs)) {
          const op = returnOp(window, lease);
          if (op) ops.push(op);
          window.lease = undefined;
        }
        if (!window.lease && !window.taking && at - window.lastUsed >= options.idleMs) windows.delete(window.entry);
      }
      giveBack(ops);
    },
    Math.max(10, Math.floor(options.idleMs / 2)),
  );
  sweep.unref();

  function windowFor({ key, limit, windowMs, sizing = 'hits', part }: WindowHit, at: number): Window {
    const entry = part === undefined ? key : `${key}\u0000${part}`;
    let window = windows.get(entry);
    if (!window || window.limit !== limit || window.windowMs !== windowMs || window.sizing !== sizing) {
      // A key whose limit changed starts over: its old lease was sized for the old limit.
      const old = window?.lease && returnOp(window, window.lease);
      if (old) giveBack([old]);
      window = {
        key,
        entry,
        limit,
        windowMs,
        sizing,
        lastUsed: at,
        hits: 0,
        calls: 0,
        largest: 0,
        largestBefore: 0,
        since: at,
        rate: 0,
        callsBefore: 0,
        taking: false,
        noTakeUntil: 0,
      };
      windows.set(entry, window);
    }
    return window;
  }

  const covers = (lease: Lease | undefined, at: number, cost: number): lease is Lease =>
    lease !== undefined && at < lease.endsAt && lease.left >= cost;

  /** Whether `lease` is still the one this edge spends on `window` (not given back, its cell not ended). */
  const held = (window: Window, lease: Lease): boolean =>
    !closed && windows.get(window.entry) === window && window.lease === lease && now() < lease.endsAt;

  function correction(window: Window, lease: Lease, counted: number, cost: number): StoreOp | undefined {
    const delta = Math.max(0, Math.ceil(cost)) - counted;
    if (delta === 0) return undefined;
    if (delta < 0) {
      if (held(window, lease)) {
        lease.left -= delta;
        return undefined;
      }
      return { op: 'windowReturn', key: window.key, windowMs: window.windowMs, cell: lease.cell, amount: -delta };
    }
    if (held(window, lease) && lease.left >= delta) {
      lease.left -= delta;
      return undefined;
    }
    return { op: 'windowAdjust', key: window.key, windowMs: window.windowMs, amount: delta };
  }

  function hitAll(hits: readonly WindowHit[]): CorrectableHit[] | undefined {
    if (closed || hits.length === 0) return undefined;
    const at = now();
    const found = hits.map((hit) => {
      const window = windowFor(hit, at);
      countHit(window, at, hit.cost);
      return window;
    });
    if (!found.every((window, i) => covers(window.lease, at, hits[i]!.cost))) {
      // A busy window whose lease is missing or too small takes a slice (added to a lease of the same cell).
      found.forEach((window, i) => {
        const busy = window.calls >= options.minHits || window.callsBefore >= options.minHits;
        if (busy && !covers(window.lease, at, hits[i]!.cost)) take(window, at);
      });
      return undefined;
    }
    return found.map((window, i) => {
      const lease = window.lease!;
      const { cost, limit } = hits[i]!;
      lease.left -= cost;
      if (lease.left * 4 < lease.granted) take(window, at);
      return {
        limit,
        remaining: lease.remainingAtTake + lease.left,
        resetMs: lease.endsAt - at,
        correct: (actual: number) => correction(window, lease, cost, actual),
      };
    });
  }

  return {
    hit(key, limit, windowMs, cost, part) {
      const [leased] = hitAll([{ key, limit, windowMs, cost, part }]) ?? [];
      if (!leased) return undefined;
      return { limit: leased.limit, remaining: leased.remaining, resetMs: leased.resetMs };
    },

    hitAll,

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      const ops: StoreOp[] = [];
      for (const window of windows.values()) {
        const op = window.lease && returnOp(window, window.lease);
        if (op) ops.push(op);
      }
      windows.clear();
      if (ops.length > 0)
        await deps.store
          .batch(ops)
          .catch((err: unknown) => deps.logger.warn({ err }, 'returning rate-limit leases failed'));
    },
  };
}

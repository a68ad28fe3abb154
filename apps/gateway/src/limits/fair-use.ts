import type { SharedStore, StoreOp } from '@sbc/cache';
import type { Logger } from '@sbc/logging';
import { millicreditsFromCredits } from '@sbc/money';

/**
 * House-fast fair use: credits used free of charge, counted in `fair:<user>:h:<hour>` and `fair:<user>:d:<day>`
 * for the 500-per-5-hours and 2,000-per-7-days windows. A user has fair use left while both windows' sums are
 * under their allowance.
 */
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const FAIR_USE_5H = millicreditsFromCredits(500);
const FAIR_USE_7D = millicreditsFromCredits(2_000);

/** The counters of a user's windows at `atMs`: the 5 hours (this one first), then the 7 days. */
export function fairUseKeys(userId: string, atMs: number): string[] {
  const hour = Math.floor(atMs / HOUR_MS);
  const day = Math.floor(atMs / DAY_MS);
  return [
    ...Array.from({ length: 5 }, (_, i) => `fair:${userId}:h:${hour - i}`),
    ...Array.from({ length: 7 }, (_, i) => `fair:${userId}:d:${day - i}`),
  ];
}

type Increment = StoreOp & { op: 'incrBy' };

/** What one settle adds: `amount` millicredits to the hour's and the day's counter. */
export function fairUseIncrements(userId: string, atMs: number, amount: number): Increment[] {
  return [
    { op: 'incrBy', key: `fair:${userId}:h:${Math.floor(atMs / HOUR_MS)}`, amount, ttlMs: 6 * HOUR_MS },
    { op: 'incrBy', key: `fair:${userId}:d:${Math.floor(atMs / DAY_MS)}`, amount, ttlMs: 8 * DAY_MS },
  ];
}

interface FairUseSums {
  hours: number;
  days: number;
}

/** The two windows' sums from the counters' values, in the order of `fairUseKeys`. */
function fairUseSums(values: readonly number[]): FairUseSums {
  const sum = (from: number, to: number) => values.slice(from, to).reduce((total, value) => total + value, 0);
  return { hours: sum(0, 5), days: sum(5, 12) };
}

const hasFairUseLeft = ({ hours, days }: FairUseSums): boolean => hours < FAIR_USE_5H && days < FAIR_USE_7D;

/** Whether `userId` has fair use left at `atMs`, read from the store (one round trip). */
export async function readFairUseLeft(store: SharedStore, userId: string, atMs: number): Promise<boolean> {
  const values = await store.getMany(fairUseKeys(userId, atMs));
  return hasFairUseLeft(fairUseSums(values.map((value) => Number(value ?? 0))));
}

export interface FairUseViewOptions {
  /** A user's view is read from the store at most this often. */
  refreshMs: number;
  /** This edge's increments go to the store this often, all users' in one round trip. */
  flushMs: number;
  /** Within this fraction of an allowance, a user's calls read and write the store on every call. */
  nearShare: number;
  /** A view not used this long is forgotten. */
  idleMs: number;
}

const DEFAULT_FAIR_USE_VIEWS: FairUseViewOptions = {
  refreshMs: 1_000,
  flushMs: 1_000,
  nearShare: 1 / 10,
  idleMs: 60_000,
};

interface View {
  /** The hour and the day the sums were read in: another one reads again. */
  hour: number;
  day: number;
  /** The windows' sums at the last read, plus what this edge has counted since. */
  hours: number;
  days: number;
  /** When it was read, on this edge's monotonic clock (undefined while the first read is on its way). */
  readAt?: number;
  lastUsed: number;
  reading?: Promise<View>;
}

/**
 * This edge's view of its users' fair use (docs/leased-limits.md, "House-fast fair use"): a user's windows are read
 * at most once per `refreshMs` and answered from the view in between, and the credits a settle counts go into the
 * view at once and to the store in a background flush. Near an allowance a user is read and written per call. The
 * overshoot this allows across edges is what the other edges' settles add in `flushMs + refreshMs`; an edge that
 * dies loses at most its last `flushMs` of increments.
 */
export interface FairUseViews {
  /** Whether `userId` still has fair use left at `atMs` (wall clock, which names the hour and the day). */
  left(userId: string, atMs: number): Promise<boolean>;
  /** Counts `milli` free house-fast credits used by `userId` at `atMs`. */
  record(userId: string, milli: number, atMs: number): Promise<void>;
  /** Sends every increment not yet in the store (on drain and shutdown); later calls go per call. */
  close(): Promise<void>;
}

export function createFairUseViews(deps: {
  store: SharedStore;
  logger: Logger;
  options?: Partial<FairUseViewOptions>;
  /** Monotonic ms; injectable for tests. */
  clock?: () => number;
}): FairUseViews {
  const options = { ...DEFAULT_FAIR_USE_VIEWS, ...deps.options };
  const clock = deps.clock ?? (() => performance.now());
  const views = new Map<string, View>();
  /** Increments waiting for the next flush, by counter. */
  const pending = new Map<string, { amount: number; ttlMs?: number }>();
  /**
   * Increments on their way to the store, by the number of their send. A read adds those sent after it (and those
   * waiting) to what it finds: the store runs one connection's commands in order, so the read found every send
   * before it and none after it, whenever their answers come.
   */
  const sending = new Map<number, readonly Increment[]>();
  let sends = 0;
  let closed = false;

  const near = (view: View) =>
    view.hours >= FAIR_USE_5H * (1 - options.nearShare) || view.days >= FAIR_USE_7D * (1 - options.nearShare);

  const wait = (ops: readonly Increment[]) => {
    for (const { key, amount, ttlMs } of ops)
      pending.set(key, { amount: (pending.get(key)?.amount ?? 0) + amount, ttlMs });
  };

  async function send(ops: Increment[]): Promise<void> {
    const number = ++sends;
    sending.set(number, ops);
    try {
      await deps.store.batch(ops);
    } finally {
      sending.delete(number);
    }
  }

  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const ops = [...pending].map(([key, { amount, ttlMs }]) => ({ op: 'incrBy' as const, key, amount, ttlMs }));
    pending.clear();
    await send(ops).catch((err: unknown) => {
      // Kept for the next flush: a lost increment only errs towards more free use.
      wait(ops);
      deps.logger.warn({ err }, 'flushing fair-use counters failed');
    });
  }

  function read(userId: string, atMs: number): Promise<View> {
    const keys = fairUseKeys(userId, atMs);
    const hour = Math.floor(atMs / HOUR_MS);
    const day = Math.floor(atMs / DAY_MS);
    const sentBefore = sends;
    const reading = deps.store.getMany(keys).then(
      (values) => {
        const notFound = (key: string) => {
          let amount = pending.get(key)?.amount ?? 0;
          for (const [number, ops] of sending)
            if (number > sentBefore) for (const op of ops) if (op.key === key) amount += op.amount;
          return amount;
        };
        const sums = fairUseSums(values.map((value, i) => Number(value ?? 0) + notFound(keys[i]!)));
        const view: View = { hour, day, ...sums, readAt: clock(), lastUsed: clock() };
        views.set(userId, view);
        return view;
      },
      (err: unknown) => {
        if (views.get(userId)?.reading === reading) views.delete(userId);
        throw err;
      },
    );
    const view = views.get(userId);
    if (view) view.reading = reading;
    else views.set(userId, { hour, day, hours: 0, days: 0, lastUsed: clock(), reading });
    return reading;
  }

  const timer = setInterval(() => {
    void flush();
    const at = clock();
    for (const [userId, view] of views) if (!view.reading && at - view.lastUsed >= options.idleMs) views.delete(userId);
  }, options.flushMs);
  timer.unref();

  return {
    async left(userId, atMs) {
      if (closed) return readFairUseLeft(deps.store, userId, atMs);
      let view = views.get(userId);
      const hour = Math.floor(atMs / HOUR_MS);
      const day = Math.floor(atMs / DAY_MS);
      if (view?.reading) view = await view.reading;
      else if (
        !view ||
        view.readAt === undefined ||
        view.hour !== hour ||
        view.day !== day ||
        clock() - view.readAt >= options.refreshMs ||
        near(view)
      )
        view = await read(userId, atMs);
      view.lastUsed = clock();
      return hasFairUseLeft(view);
    },

    async record(userId, milli, atMs) {
      if (milli <= 0) return;
      const amount = Math.ceil(milli);
      const ops = fairUseIncrements(userId, atMs, amount);
      const view = views.get(userId);
      const hour = Math.floor(atMs / HOUR_MS);
      const day = Math.floor(atMs / DAY_MS);
      if (view && view.hour === hour && view.day === day) {
        view.hours += amount;
        view.days += amount;
      }
      if (closed || !view || near(view)) {
        // Near an allowance (or with no view of the user) the count goes to the store now, as per call, with what
        // this edge still holds of the user's.
        for (const key of fairUseKeys(userId, atMs)) {
          const waiting = pending.get(key);
          if (!waiting) continue;
          pending.delete(key);
          ops.push({ op: 'incrBy', key, amount: waiting.amount, ttlMs: waiting.ttlMs });
        }
        await send(ops).catch((err: unknown) => {
          wait(ops);
          deps.logger.warn({ err }, 'counting fair use failed; kept for the next flush');
        });
      } else wait(ops);
    },

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await flush();
      views.clear();
    },
  };
}

/**
 * Many calls waiting on one signal (the edge's drain deadline) without one listener each: Node's
 * EventTarget walks its whole listener list on every add to refuse duplicates, so ten thousand open streams
 * made each new stream's start cost grow with the number already open. One listener per signal runs the
 * signal's watchers.
 */
const watchers = new WeakMap<AbortSignal, Watchers>();

/** Calls `fn` once when `signal` aborts (at once when it already has); the returned function stops watching. */
export function whenAborted(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  return (watchers.get(signal) ?? watch(signal)).add(fn);
}

/**
 * The one listener on `signal`. Built here rather than inline in whenAborted so that its closure holds only the
 * signal and its watchers: inline, it shared whenAborted's scope with the first watcher's `fn`, and kept that
 * call (its request, its reply) alive for as long as the signal lived.
 */
function watch(signal: AbortSignal): Watchers {
  const each = new Watchers();
  watchers.set(signal, each);
  signal.addEventListener(
    'abort',
    () => {
      watchers.delete(signal);
      each.run();
    },
    { once: true },
  );
  return each;
}

/**
 * A signal's watchers in slots that are reused, not a Set: every call adds one and removes it, and a Set that
 * churns so rehashes every few calls, while V8 links each table it replaces to the next. Once a full collection
 * has moved one of those tables to the old generation, every later table and every watcher they held (each a
 * whole call) outlives each scavenge until the next full collection (docs/benchmarks.md, "Maps that churn").
 */
class Watchers {
  private readonly slots: Array<(() => void) | undefined> = [];
  private readonly free: number[] = [];

  add(fn: () => void): () => void {
    const slot = this.free.pop() ?? this.slots.length;
    // A wrapper of its own, so one function watched twice is two watchers and each stop removes only its own.
    const entry = () => fn();
    this.slots[slot] = entry;
    return () => {
      if (this.slots[slot] !== entry) return;
      this.slots[slot] = undefined;
      this.free.push(slot);
    };
  }

  run(): void {
    for (const entry of this.slots) entry?.();
  }
}

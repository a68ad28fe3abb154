/**
 * Many calls waiting on one signal (the edge's drain deadline) without one listener each: Node's
 * EventTarget walks its whole listener list on every add to refuse duplicates, so ten thousand open streams
 * made each new stream's start cost grow with the number already open. One listener per signal runs a set.
 */
const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` once when `signal` aborts (at once when it already has); the returned function stops watching. */
export function whenAborted(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  const own = watchers.get(signal) ?? watch(signal);
  // A wrapper, so one function watched twice is two entries.
  const entry = () => fn();
  own.add(entry);
  return () => own.delete(entry);
}

/**
 * The one listener on `signal`. Built here rather than inline in whenAborted so that its closure holds only the
 * signal and the set: inline, it shared whenAborted's scope with the first watcher's `fn`, and kept that call
 * (its request, its reply) alive for as long as the signal lived.
 */
function watch(signal: AbortSignal): Set<() => void> {
  const set = new Set<() => void>();
  watchers.set(signal, set);
  signal.addEventListener(
    'abort',
    () => {
      watchers.delete(signal);
      for (const each of set) each();
    },
    { once: true },
  );
  return set;
}

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
  let set = watchers.get(signal);
  if (!set) {
    const created = new Set<() => void>();
    set = created;
    watchers.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        watchers.delete(signal);
        for (const each of created) each();
      },
      { once: true },
    );
  }
  const own = set;
  // A wrapper, so one function watched twice is two entries.
  const entry = () => fn();
  own.add(entry);
  return () => own.delete(entry);
}

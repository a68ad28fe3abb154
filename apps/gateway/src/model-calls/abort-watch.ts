import { SlotSet } from '@sbc/http';

/**
 * Many calls waiting on one signal (the edge's drain deadline) without one listener each: Node's
 * EventTarget walks its whole listener list on every add to refuse duplicates, so ten thousand open streams
 * made each new stream's start cost grow with the number already open. One listener per signal runs the
 * signal's watchers, kept in a SlotSet: every call adds one and removes it, which would make a Set churn.
 */
const watchers = new WeakMap<AbortSignal, SlotSet<() => void>>();

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
function watch(signal: AbortSignal): SlotSet<() => void> {
  const each = new SlotSet<() => void>();
  watchers.set(signal, each);
  signal.addEventListener(
    'abort',
    () => {
      watchers.delete(signal);
      each.forEach((fn) => fn());
    },
    { once: true },
  );
  return each;
}

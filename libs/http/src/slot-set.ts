/**
 * A set for members that come and go all the time (a connection per request, a watcher per call), kept in slots
 * that are reused instead of a Set. A Set that takes and drops a member on every request rehashes every few
 * requests, and V8 links each table it replaces to the next (for iterators still walking it) without clearing
 * the members it held; once a full collection has moved one of those tables to the old generation, every later
 * table and every member they held outlive each scavenge until the next full collection (docs/benchmarks.md,
 * "Maps that churn"). An array of slots grows to the most members held at once and is never rebuilt.
 */
export class SlotSet<T> {
  private readonly slots: Array<T | undefined> = [];
  private readonly free: number[] = [];

  /** Adds `member` (a member added twice is two members); the returned function removes it, once. */
  add(member: T): () => void {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = member;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.slots[slot] = undefined;
      this.free.push(slot);
    };
  }

  /** Calls `fn` with each member; members removed meanwhile and not yet passed are skipped. */
  forEach(fn: (member: T) => void): void {
    for (const member of this.slots) if (member !== undefined) fn(member);
  }
}

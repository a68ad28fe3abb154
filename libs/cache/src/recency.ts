/** An entry of a Map kept in recency order by a Recency. */
export interface Placed {
  /** When it was placed at the recent end, counted in placements. */
  placedAt: number;
}

/**
 * Recency order for a Map whose insertion order is its recency order (eviction takes from the front). A read
 * moves its entry to the recent end only once half the entries or more were placed after it, not on every hit:
 * a Map that takes and drops an entry on every call rehashes every few calls, and V8 links each table it
 * replaces to the next, so once a full collection has moved one of those tables to the old generation every
 * later table outlives each scavenge until the next full collection (docs/benchmarks.md, "Maps that churn").
 * Eviction still takes the least recently placed entry, and an entry read at least once every half a map of
 * placements is never evicted.
 */
export class Recency {
  private placed = 0;

  /** Puts `entry` at the recent end of `map` under `key` (replacing any entry there). */
  place<K, E extends Placed>(map: Map<K, E>, key: K, entry: E): void {
    map.delete(key);
    entry.placedAt = ++this.placed;
    map.set(key, entry);
  }

  /** Counts a read of `entry` (in `map` under `key`) as use. */
  read<K, E extends Placed>(map: Map<K, E>, key: K, entry: E): void {
    if (this.placed - entry.placedAt >= map.size / 2) this.place(map, key, entry);
  }
}

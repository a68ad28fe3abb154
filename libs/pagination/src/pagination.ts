/**
 * List paging as CONTRACTS "Lists" fixes it: `limit`, `after_id` (the next page: items after this one in list
 * order) or `before_id` (the previous page: items before it), never both; every account list is newest first.
 * Account ids are `<prefix>_<ULID>`, so "newest first" is "id descending" and a page is a keyset range of ids.
 */

export interface PageQuery {
  limit: number;
  after_id?: string;
  before_id?: string;
}

export interface ListEnvelope<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;

/**
 * The keyset range that answers a page of a newest-first list of sortable ids: which ids to read, in which
 * order, and one more row than the page holds so `has_more` needs no count.
 */
export interface KeysetRange {
  /** Read ids strictly below (`lt`) or above (`gt`) the cursor; absent for the first page. */
  cursor?: { lt: string } | { gt: string };
  /** `desc` for the first page and `after_id`; `before_id` reads upward and is reversed by `toPage`. */
  order: 'asc' | 'desc';
  take: number;
}

export function keysetRange(query: PageQuery): KeysetRange {
  if (query.before_id !== undefined) return { cursor: { gt: query.before_id }, order: 'asc', take: query.limit + 1 };
  if (query.after_id !== undefined) return { cursor: { lt: query.after_id }, order: 'desc', take: query.limit + 1 };
  return { order: 'desc', take: query.limit + 1 };
}

/** Turns the rows read for `keysetRange(query)` into the list envelope, newest first. */
export function toPage<T>(rows: readonly T[], query: PageQuery, idOf: (row: T) => string): ListEnvelope<T> {
  const hasMore = rows.length > query.limit;
  const kept = rows.slice(0, query.limit);
  const data = query.before_id !== undefined ? kept.reverse() : kept;
  return listEnvelope(data, hasMore, idOf);
}

/**
 * One page of a list already held in memory, in its own display order (which need not be by id). An
 * `after_id` or `before_id` that is not in the list gives an empty page.
 */
export function pageOf<T>(items: readonly T[], query: PageQuery, idOf: (item: T) => string): ListEnvelope<T> {
  if (query.before_id !== undefined) {
    const end = items.findIndex((item) => idOf(item) === query.before_id);
    const before = end < 0 ? [] : items.slice(0, end);
    return listEnvelope(before.slice(-query.limit), before.length > query.limit, idOf);
  }
  let after: readonly T[] = items;
  if (query.after_id !== undefined) {
    const start = items.findIndex((item) => idOf(item) === query.after_id);
    after = start < 0 ? [] : items.slice(start + 1);
  }
  return listEnvelope(after.slice(0, query.limit), after.length > query.limit, idOf);
}

/** A page already in list order (a service read it) in the list envelope, its cursors the first and last ids. */
export function listEnvelope<T>(data: T[], hasMore: boolean, idOf: (item: T) => string): ListEnvelope<T> {
  return {
    object: 'list',
    data,
    has_more: hasMore,
    first_id: data.length > 0 ? idOf(data[0]!) : null,
    last_id: data.length > 0 ? idOf(data[data.length - 1]!) : null,
  };
}

/** Maps each item of a page, keeping its envelope (ids are taken before mapping). */
export function mapPage<T, U>(page: ListEnvelope<T>, map: (item: T) => U): ListEnvelope<U> {
  return { ...page, data: page.data.map(map) };
}

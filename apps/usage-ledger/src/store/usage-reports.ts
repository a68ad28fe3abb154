import {
  creditsFromMicrocredits,
  microcredits,
  microcreditsFromCredits,
  microcreditsFromDecimalText,
  nanoUsd,
  nanoUsdFromDecimalText,
  nanoUsdFromUsd,
  usdFromNanoUsd,
} from '@sbc/money';
import { keysetRange, toPage, type ListEnvelope } from '@sbc/pagination';
import type { PrismaClient } from '../generated/prisma/client';
import type { ExportPage, ReadExportPage } from './export-pages';

/** Whose usage: an account, or a team (every call made with that team's keys). */
export type UsageScope = { accountId: string } | { orgId: string };

export interface Window {
  from: Date;
  to: Date;
  /** IANA zone for day buckets. */
  tz: string;
}

export interface Metrics {
  requests: number;
  failed: number;
  tokensIn: number;
  tokensOut: number;
  cacheRead: number;
  cacheWrite: number;
  /** Credits billed: a decimal view of whole microcredits (the money module converts it exactly). */
  credits: number;
  /** USD at list price: a decimal view of whole nano-USD. */
  listUsd: number;
}

export type Grouping = 'key' | 'model' | 'provider' | 'upstream';

export interface GroupTotals {
  id: string;
  label: string;
  metrics: Metrics;
}

export interface Bucket {
  key: string;
  start: Date;
  metrics: Metrics;
  by: Map<string, Metrics>;
}

/**
 * Where a query reads from. The rollups are exact sums of usage_generations, so any of the three answers the
 * same; the cheapest one whose grain divides every bucket boundary is picked: the daily rollup for UTC days,
 * the hourly rollup when every boundary is a whole UTC hour (every zone but the few with :30 or :45 offsets),
 * otherwise the calls themselves.
 */
interface Source {
  table: string;
  /** The instant a row belongs to. */
  time: string;
  /** SQL for `[from, to)` on the row's time, given the two parameter placeholders. */
  within: (from: string, to: string) => string;
  scope: (scope: UsageScope, param: string) => string;
  columns: {
    requests: string;
    failed: string;
    tokensIn: string;
    tokensOut: string;
    cacheRead: string;
    cacheWrite: string;
    credits: string;
    listUsd: string;
  };
  dims: Record<Grouping, string>;
  keyLabel: string;
}

const ROLLUP_COLUMNS = {
  requests: 'requests',
  failed: 'failed',
  tokensIn: 'tokens_in',
  tokensOut: 'tokens_out',
  cacheRead: 'cache_read',
  cacheWrite: 'cache_write',
  credits: 'credits',
  listUsd: 'list_usd',
};
const ROLLUP_DIMS: Record<Grouping, string> = {
  key: 'key_id',
  model: 'model',
  provider: 'provider',
  upstream: 'upstream',
};
const rollupScope = (scope: UsageScope, param: string) =>
  'orgId' in scope ? `org_id = ${param}` : `account_id = ${param}`;

const DAILY: Source = {
  table: 'usage_daily',
  time: `(day::timestamp AT TIME ZONE 'UTC')`,
  within: (from, to) =>
    `day >= (${from}::timestamptz AT TIME ZONE 'UTC')::date AND day < (${to}::timestamptz AT TIME ZONE 'UTC')::date`,
  scope: rollupScope,
  columns: ROLLUP_COLUMNS,
  dims: ROLLUP_DIMS,
  keyLabel: 'key_label',
};

const HOURLY: Source = {
  table: 'usage_hourly',
  time: 'hour',
  within: (from, to) => `hour >= ${from}::timestamptz AND hour < ${to}::timestamptz`,
  scope: rollupScope,
  columns: ROLLUP_COLUMNS,
  dims: ROLLUP_DIMS,
  keyLabel: 'key_label',
};

const CALLS: Source = {
  table: 'usage_generations',
  time: 'ts',
  within: (from, to) => `ts >= ${from}::timestamptz AND ts < ${to}::timestamptz`,
  scope: (scope, param) => ('orgId' in scope ? `org_id = ${param}` : `account_id = ${param}`),
  columns: {
    requests: '1',
    failed: '(CASE WHEN status >= 400 THEN 1 ELSE 0 END)',
    tokensIn: 'tokens_prompt',
    tokensOut: 'tokens_completion',
    cacheRead: 'cache_read',
    cacheWrite: 'cache_write',
    credits: 'credits_charged',
    listUsd: 'total_cost_usd',
  },
  dims: {
    key: `COALESCE(key_id, '')`,
    model: 'model',
    provider: `COALESCE(provider, '')`,
    upstream: `COALESCE(upstream, '')`,
  },
  keyLabel: 'key_label',
};

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * Day buckets in a zone whose midnights fall inside a UTC hour (:30 and :45 offsets): every hour from the
 * hourly rollup except the hours a bucket boundary cuts, which come from the calls, so a 90-day report reads
 * about 90 partial hours of calls instead of all of them, each with its own index range scan (LATERAL: a
 * plain join scanned the whole window's calls once per cut hour). `$1` is the scope, `$2`/`$3` the window,
 * and `cutHours` the placeholder of the cut hours' starts, comma-separated.
 */
function hoursAndCutHours(scope: UsageScope, cutHours: string): Source {
  const names = Object.keys(ROLLUP_COLUMNS) as Array<keyof typeof ROLLUP_COLUMNS>;
  const groupings = Object.keys(ROLLUP_DIMS) as Grouping[];
  const select = (source: Source, time: string) =>
    [
      `${time} AS t`,
      ...groupings.map((group) => `${source.dims[group]} AS "${group}"`),
      `${source.keyLabel} AS key_label`,
      ...names.map((name) => `${source.columns[name]} AS "${name}"`),
    ].join(', ');
  const cuts = `string_to_array(${cutHours}, ',')::timestamptz[]`;
  return {
    table:
      `(SELECT ${select(HOURLY, 'hour')} FROM usage_hourly
               WHERE ${HOURLY.scope(scope, '$1')} AND hour >= $2::timestamptz AND hour < $3::timestamptz AND hour <> ` +
      `ALL(${cuts})
             UNION ALL
             SELECT ${select(CALLS, 'ts')} FROM unnest(${cuts}) AS cut(start)
               CROSS JOIN LATERAL (SELECT * FROM usage_generations
                 WHERE ${CALLS.scope(scope, '$1')} AND ts >= greatest(cut.start, $2::timestamptz) AND ts < ` +
      `least(cut.start + interval '1 hour', $3::timestamptz)) AS calls) AS hours`,
    time: 't',
    within: () => 'TRUE',
    scope: () => 'TRUE',
    columns: Object.fromEntries(names.map((name) => [name, `"${name}"`])) as Source['columns'],
    dims: Object.fromEntries(groupings.map((group) => [group, `"${group}"`])) as Source['dims'],
    keyLabel: 'key_label',
  };
}

function sourceFor(boundaries: Date[], tz: string): Source {
  if (boundaries.every((at) => at.getTime() % DAY_MS === 0) && isUtc(tz)) return DAILY;
  if (boundaries.every((at) => at.getTime() % HOUR_MS === 0)) return HOURLY;
  return CALLS;
}

const isUtc = (tz: string) => tz === 'UTC' || tz === 'Etc/UTC';

/**
 * [from, to) cut into the spans each source answers exactly: whole UTC days (daily rollup), whole hours
 * (hourly rollup) and the partial hours at either edge (the calls). Empty spans are left out.
 */
function spansOf(from: Date, to: Date): { source: Source; from: Date; to: Date }[] {
  const at = (ms: number) => new Date(ms);
  const hourFrom = Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS;
  const hourTo = Math.floor(to.getTime() / HOUR_MS) * HOUR_MS;
  if (hourFrom >= hourTo) return [{ source: CALLS, from, to }];
  const dayFrom = Math.ceil(hourFrom / DAY_MS) * DAY_MS;
  const dayTo = Math.floor(hourTo / DAY_MS) * DAY_MS;
  const spans =
    dayFrom < dayTo
      ? [
          { source: CALLS, from, to: at(hourFrom) },
          { source: HOURLY, from: at(hourFrom), to: at(dayFrom) },
          { source: DAILY, from: at(dayFrom), to: at(dayTo) },
          { source: HOURLY, from: at(dayTo), to: at(hourTo) },
          { source: CALLS, from: at(hourTo), to },
        ]
      : [
          { source: CALLS, from, to: at(hourFrom) },
          { source: HOURLY, from: at(hourFrom), to: at(hourTo) },
          { source: CALLS, from: at(hourTo), to },
        ];
  return spans.filter((span) => span.from < span.to);
}

const sums = (source: Source) =>
  Object.entries(source.columns)
    .map(([name, column]) => `sum(${column})::text AS "${name}"`)
    .join(', ');

type MetricsRow = Record<keyof Metrics, string | null>;

function metricsOf(row: MetricsRow | undefined): Metrics {
  const n = (value: string | null | undefined) => Number(value ?? 0);
  return {
    requests: n(row?.requests),
    failed: n(row?.failed),
    tokensIn: n(row?.tokensIn),
    tokensOut: n(row?.tokensOut),
    cacheRead: n(row?.cacheRead),
    cacheWrite: n(row?.cacheWrite),
    // Parsed from the numeric's text to whole units, so the decimals hold exact microcredits and nano-USD.
    credits: creditsFromMicrocredits(microcreditsFromDecimalText(row?.credits ?? '0')),
    listUsd: usdFromNanoUsd(nanoUsdFromDecimalText(row?.listUsd ?? '0')),
  };
}

const ZERO_METRICS: Metrics = metricsOf(undefined);

function scopeValue(scope: UsageScope): string {
  return 'orgId' in scope ? scope.orgId : scope.accountId;
}

/** A group id as shown: calls made with no key (a session) group under `(none)`. */
const groupId = (id: string) => (id === '' ? '(none)' : id);

/**
 * Usage reports over the ledger's calls and rollups. `readExportPage` reads the export file's pages: through
 * Prisma, or straight from PostgreSQL's wire where the driver is at hand (main.ts chooses).
 */
export function createUsageReports(db: PrismaClient, readExportPage: ReadExportPage) {
  const query = <T>(sql: string, ...params: unknown[]) => db.$queryRawUnsafe<T[]>(sql, ...params);

  /**
   * Totals per group for each grouping asked, over [from, to), in one statement: whole UTC days from the daily
   * rollup, the whole hours around them from the hourly rollup, and only the partial hours at the edges from
   * the calls themselves (GROUPING SETS, one set per grouping). Exact sums, so the answer is the calls' own.
   */
  async function grouped<G extends Grouping>(
    scope: UsageScope,
    from: Date,
    to: Date,
    groupings: readonly G[],
  ): Promise<Record<G, { totals: Metrics; groups: GroupTotals[] }>> {
    const dims = groupings.map((group) => `g_${group}`);
    const spans = spansOf(from, to);
    const parts = spans.map(
      (span, n) =>
        `SELECT ${groupings
          .map((group, i) => `${span.source.dims[group]} ` + `AS ${dims[i]}`)
          .join(', ')}, ${span.source.keyLabel} AS label, ${Object.entries(span.source.columns)
          .map(([name, column]) => `${column} AS "${name}"`)
          .join(', ')}
         FROM ${span.source.table} WHERE ${span.source.scope(scope, '$1')} ` +
        `AND ${span.source.within(`$${2 * n + 2}`, `$${2 * n + 3}`)}`,
    );
    const rows = await query<MetricsRow & { grouping: G; gid: string; label: string | null }>(
      `SELECT CASE ${groupings.map((group, i) => `WHEN grouping(${dims[i]}) = 0 THEN '${group}'`).join(' ')} END AS ` +
        `grouping,
              COALESCE(${dims.join(', ')}) AS gid, max(label) AS label, ${Object.keys(ROLLUP_COLUMNS)
                .map((name) => `sum("${name}")::text AS "${name}"`)
                .join(', ')}
       FROM (${parts.join(' UNION ALL ')}) AS spans GROUP BY GROUPING SETS ` +
        `(${dims.map((dim) => `(${dim})`).join(', ')})`,
      scopeValue(scope),
      ...spans.flatMap((span) => [span.from.toISOString(), span.to.toISOString()]),
    );
    const answer = {} as Record<G, { totals: Metrics; groups: GroupTotals[] }>;
    for (const group of groupings) {
      const groups = rows
        .filter((row) => row.grouping === group)
        .map((row) => ({
          id: groupId(row.gid),
          label: group === 'key' ? (row.label ?? groupId(row.gid)) : groupId(row.gid),
          metrics: metricsOf(row),
        }));
      answer[group] = { totals: addUp(groups.map((g) => g.metrics)), groups: sortGroups(groups) };
    }
    return answer;
  }

  /**
   * The window cut into buckets: local days of `tz` (the first and last day whole, so a window always covers
   * the days it touches) or UTC hours (labelled in `tz`), each with its totals and, with a grouping, per group.
   */
  async function buckets(
    scope: UsageScope,
    window: Window,
    bucket: 'day' | 'hour',
    group?: Grouping,
  ): Promise<{ from: Date; to: Date; buckets: Bucket[]; groups: GroupTotals[] }> {
    const frames =
      bucket === 'day'
        ? await query<{ key: string; start: Date; end: Date }>(
            `SELECT to_char(d, 'YYYY-MM-DD') AS key, (d AT TIME ZONE $3) AS start, ((d + interval '1 day') AT TIME ` +
              `ZONE $3) AS "end"
             FROM generate_series(date_trunc('day', $1::timestamptz AT TIME ZONE $3), ($2::timestamptz AT TIME ZONE ` +
              `$3) - interval '1 microsecond', interval '1 day') AS d`,
            window.from.toISOString(),
            window.to.toISOString(),
            window.tz,
          )
        : await query<{ key: string; start: Date; end: Date }>(
            `SELECT to_char(h AT TIME ZONE $3, 'YYYY-MM-DD"T"HH24:MI') AS key, h AS start, h + interval '1 hour' AS ` +
              `"end"
             FROM generate_series(date_trunc('hour', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', ` +
              `$2::timestamptz - interval '1 microsecond', interval '1 hour') AS h`,
            window.from.toISOString(),
            window.to.toISOString(),
            window.tz,
          );
    if (frames.length === 0) return { from: window.from, to: window.from, buckets: [], groups: [] };
    const from = frames[0]!.start;
    const to = frames.at(-1)!.end;
    const boundaries = frames.flatMap((f) => [f.start, f.end]);
    // Hour buckets always start on whole UTC hours; day buckets do not in :30 and :45 zones.
    const cutHours =
      bucket === 'day'
        ? [
            ...new Set(
              boundaries
                .filter((at) => at.getTime() % HOUR_MS !== 0)
                .map((at) => Math.floor(at.getTime() / HOUR_MS) * HOUR_MS),
            ),
          ]
        : [];
    const source = cutHours.length > 0 ? hoursAndCutHours(scope, '$5') : sourceFor(boundaries, window.tz);
    const bucketOf =
      bucket === 'day'
        ? `to_char(date_trunc('day', ${source.time} AT TIME ZONE $4), 'YYYY-MM-DD')`
        : `to_char(date_trunc('hour', ${source.time} AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24')`;
    const dim = group ? source.dims[group] : `''`;
    const rows = await query<MetricsRow & { bucket: string; gid: string; label: string | null }>(
      `SELECT ${bucketOf} AS bucket, ${dim} AS gid, max(${source.keyLabel}) AS label, ${sums(source)}
       FROM ${source.table} WHERE ${source.scope(scope, '$1')} AND ${source.within('$2', '$3')} GROUP BY 1, 2`,
      scopeValue(scope),
      from.toISOString(),
      to.toISOString(),
      ...(bucket === 'day' ? [window.tz] : []),
      ...(cutHours.length > 0 ? [cutHours.map((at) => new Date(at).toISOString()).join(',')] : []),
    );
    const frameKey = (frame: { key: string; start: Date }) =>
      bucket === 'day' ? frame.key : frame.start.toISOString().slice(0, 13);
    const byFrame = new Map<string, Bucket>(
      frames.map((frame) => [
        frameKey(frame),
        { key: frame.key, start: frame.start, metrics: ZERO_METRICS, by: new Map() },
      ]),
    );
    const groupTotals = new Map<string, GroupTotals>();
    for (const row of rows) {
      const target = byFrame.get(row.bucket);
      if (!target) continue;
      const metrics = metricsOf(row);
      target.metrics = addUp([target.metrics, metrics]);
      if (!group) continue;
      const id = groupId(row.gid);
      target.by.set(id, addUp([target.by.get(id) ?? ZERO_METRICS, metrics]));
      const totals = groupTotals.get(id) ?? { id, label: id, metrics: ZERO_METRICS };
      totals.metrics = addUp([totals.metrics, metrics]);
      if (group === 'key' && row.label) totals.label = row.label;
      groupTotals.set(id, totals);
    }
    return { from, to, buckets: [...byFrame.values()], groups: sortGroups([...groupTotals.values()]) };
  }

  return {
    grouped,
    buckets,

    /**
     * One page of calls, newest first; `after_id` / `before_id` are event ids (a row's `id`): unique, unlike
     * request ids, which a caller may reuse.
     */
    async listCalls(
      scope: UsageScope,
      page: { limit: number; after_id?: string; before_id?: string },
      filter: { from?: Date; to?: Date; keyId?: string; model?: string },
    ): Promise<ListEnvelope<CallRow>> {
      const range = keysetRange(page);
      const params: unknown[] = [scopeValue(scope)];
      const where = [CALLS.scope(scope, '$1')];
      const param = (value: unknown) => {
        params.push(value);
        return `$${params.length}`;
      };
      if (filter.from) where.push(`ts >= ${param(filter.from.toISOString())}::timestamptz`);
      if (filter.to) where.push(`ts < ${param(filter.to.toISOString())}::timestamptz`);
      if (filter.keyId) where.push(`key_id = ${param(filter.keyId)}`);
      if (filter.model) where.push(`model = ${param(filter.model)}`);
      if (range.cursor) {
        const [op, id] = 'lt' in range.cursor ? ['<', range.cursor.lt] : ['>', range.cursor.gt];
        // A cursor that is not one of this scope's calls matches nothing, so the page is empty.
        where.push(
          `(ts, event_id) ${op} (SELECT ts, event_id FROM usage_generations WHERE event_id = ${param(id)} ` +
            `AND ${CALLS.scope(scope, '$1')})`,
        );
      }
      const order = range.order === 'desc' ? 'DESC' : 'ASC';
      const rows = await query<CallRow>(
        `SELECT ${CALL_COLUMNS} FROM usage_generations WHERE ${where.join(' AND ')} ORDER BY ts ${order}, ` +
          `event_id ${order} LIMIT ${range.take}`,
        ...params,
      );
      return toPage(rows, page, (row) => row.event_id);
    },

    /** Calls of a window oldest first, a page at a time (a keyset loop: no page holds more than `pageSize`). */
    async *exportCalls(
      scope: UsageScope,
      from: Date,
      to: Date,
      pageSize: number,
      signal?: AbortSignal,
    ): AsyncGenerator<CallRow[]> {
      let cursor: { ts: Date; eventId: string } | undefined;
      for (;;) {
        if (signal?.aborted) return;
        const rows = await query<CallRow>(
          `SELECT ${CALL_COLUMNS} FROM usage_generations
           WHERE ${CALLS.scope(scope, '$1')} AND ts >= $2::timestamptz AND ts < $3::timestamptz
             ${cursor ? 'AND (ts, event_id) > ($5::timestamptz, $6)' : ''}
           ORDER BY ts ASC, event_id ASC LIMIT $4`,
          scopeValue(scope),
          from.toISOString(),
          to.toISOString(),
          pageSize,
          ...(cursor ? [cursor.ts.toISOString(), cursor.eventId] : []),
        );
        if (rows.length === 0) return;
        yield rows;
        if (rows.length < pageSize) return;
        const last = rows.at(-1)!;
        cursor = { ts: last.ts, eventId: last.event_id };
      }
    },

    /**
     * The export file of a window (GET /v1/usage/export), oldest call first, each line rendered by PostgreSQL,
     * a page at a time (a keyset loop on the (scope, ts, event_id) index), and handed out in chunks of at most
     * 1 MiB (EXPORT_CHUNK_BYTES): a row is one line on the way, never an object of fields. The next page is read
     * while this one is handed out, so the database and the stream work side by side; memory holds about two
     * pages.
     */
    async *exportFile(
      scope: UsageScope,
      from: Date,
      to: Date,
      format: ExportFormat,
      options: { omitSessionIds: boolean; pageRows: number; signal?: AbortSignal },
    ): AsyncGenerator<Buffer> {
      const line = format === 'csv' ? csvLine(options.omitSessionIds) : jsonLine(options.omitSessionIds);
      const readPage = (head: string, afterEventId?: string): Promise<ExportPage> => {
        // Lines one per row: aggregating them in PostgreSQL (string_agg) costs it more than the rows do.
        const page = readExportPage(
          (bind) =>
            `SELECT ${line} AS line, event_id FROM usage_generations
           WHERE ${CALLS.scope(scope, bind(scopeValue(scope)))} AND ts >= ${bind(from.toISOString())}::timestamptz ` +
            `AND ts < ${bind(to.toISOString())}::timestamptz
            ` +
            ` ${
              afterEventId
                ? `AND (ts, event_id) > (SELECT ts, event_id FROM usage_generations WHERE event_id ` +
                  `= ${bind(afterEventId)})`
                : ''
            }
           ORDER BY ts ASC, event_id ASC LIMIT ${bind(String(options.pageRows))}::integer`,
          head,
        );
        // Read ahead while the caller holds the previous page: a failure surfaces when it is awaited, and an
        // export abandoned in between must not leave it unhandled.
        page.catch(() => undefined);
        return page;
      };
      // The header goes out with the first page, so an export that fails to start fails before any byte is sent.
      let next: Promise<ExportPage> | undefined = readPage(format === 'csv' ? `${CSV_COLUMNS.join(',')}\r\n` : '');
      while (next && !options.signal?.aborted) {
        const page: ExportPage = await next;
        next = page.rows === options.pageRows ? readPage('', page.lastEventId) : undefined;
        yield* page.chunks;
      }
    },

    /** Distinct keys that made calls, and the newest call applied (what usage is fresh up to). */
    async accountFacts(accountId: string): Promise<{ keysCount: number; lastAppliedAt: Date | null }> {
      const [row] = await query<{ keys: string; last_applied_at: Date | null }>(
        `SELECT (SELECT count(DISTINCT key_id) FROM usage_daily WHERE account_id = $1 AND key_id <> '')::text AS keys,
                (SELECT last_applied_at FROM credit_accounts WHERE account_id = $1) AS last_applied_at`,
        accountId,
      );
      return { keysCount: Number(row?.keys ?? 0), lastAppliedAt: row?.last_applied_at ?? null };
    },

    /** Credits used in total, and per model/upstream rows for spend estimates, over [from, to). */
    async byModelAndUpstream(
      scope: UsageScope,
      from: Date,
      to: Date,
    ): Promise<Array<{ day: string; model: string; upstream: string; provider: string; metrics: Metrics }>> {
      const source = sourceFor([from, to], 'UTC');
      const rows = await query<MetricsRow & { day: string; model: string; upstream: string; provider: string }>(
        `SELECT to_char(${source.time} AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, ${source.dims.model} AS ` +
          `model, ${source.dims.upstream} AS upstream, ${source.dims.provider} AS provider, ${sums(source)}
         FROM ${source.table} WHERE ${source.scope(scope, '$1')} AND ${source.within('$2', '$3')} GROUP BY 1, 2, 3, 4`,
        scopeValue(scope),
        from.toISOString(),
        to.toISOString(),
      );
      return rows.map((row) => ({
        day: row.day,
        model: row.model,
        upstream: row.upstream,
        provider: row.provider,
        metrics: metricsOf(row),
      }));
    },
  };
}

export type UsageReports = ReturnType<typeof createUsageReports>;

export interface CallRow {
  event_id: string;
  request_id: string;
  ts: Date;
  model: string;
  key_id: string | null;
  key_label: string | null;
  session_id: string | null;
  org_id: string | null;
  upstream: string | null;
  provider: string | null;
  served_by: string | null;
  attempts: number;
  cache_hit: boolean;
  guardrail_id: string | null;
  guardrail_action: string | null;
  tokens_prompt: string;
  tokens_completion: string;
  cache_read: string;
  cache_write: string;
  reasoning_tokens: string;
  total_cost_usd: string;
  cache_discount_usd: string;
  credits_charged: string;
  is_byok: boolean;
  status: number;
  latency_ms: number | null;
  ttft_ms: number | null;
  stream: boolean;
  dialect_in: string | null;
  route: string | null;
}

const CALL_COLUMNS = `event_id, request_id, ts, model, key_id, key_label, session_id, org_id, upstream, provider,
  served_by, attempts, cache_hit, guardrail_id, guardrail_action,
  tokens_prompt::text AS tokens_prompt, tokens_completion::text AS tokens_completion, cache_read::text AS cache_read,
  cache_write::text AS cache_write, reasoning_tokens::text AS reasoning_tokens, total_cost_usd::text AS total_cost_usd,
  cache_discount_usd::text AS cache_discount_usd, credits_charged::text AS credits_charged, is_byok, status, latency_ms,
  ttft_ms, stream, dialect_in, route`;

export type ExportFormat = 'csv' | 'jsonl';

/** The export's CSV header; the same columns as the JSON lines, in this order. */
const CSV_COLUMNS = [
  'request_id',
  'ts',
  'model',
  'key_id',
  'key_label',
  'session_id',
  'upstream',
  'provider',
  'served_by',
  'attempts',
  'status',
  'stream',
  'is_byok',
  'native_tokens_prompt',
  'native_tokens_completion',
  'cache_read',
  'cache_write',
  'reasoning_tokens',
  'total_cost_usd',
  'cache_discount',
  'credits_charged',
  'latency_ms',
  'ttft_ms',
];

/** An instant as JavaScript's toISOString writes it. */
const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A numeric column (scale 9 at most) as JavaScript prints the number: shortest decimal, and below 1e-6 in
 * exponent notation ("1.23e-7"), where the value is a whole number of nanos m, 1 to 999, so m's digits are the
 * mantissa's and its length fixes the exponent.
 */
const numberText = (column: string) =>
  `CASE WHEN ${column} = 0 OR abs(${column}) >= 0.000001 THEN trim_scale(${column})::text
   ELSE (SELECT CASE WHEN ${column} < 0 THEN '-' ELSE '' END || left(digits, 1) || CASE WHEN length(digits) > 1 THEN ` +
  `'.' || substr(digits, 2) ELSE '' END || 'e-' || (10 - length(nanos))
         FROM (SELECT nanos, rtrim(nanos, '0') AS digits FROM (SELECT (abs(${column}) * 1000000000)::bigint::text AS ` +
  `nanos) AS n) AS m) END`;

/** The calls' free-text columns: only these can hold what CSV must quote or JSON must escape. */
const TEXT_COLUMNS = [
  'event_id',
  'request_id',
  'model',
  'key_id',
  'key_label',
  'session_id',
  'upstream',
  'provider',
  'served_by',
];

/**
 * A line in two renderings: `plain` for the calls whose text needs no quoting or escaping (nearly all: a
 * test per row is cheaper than one per cell), `escaped` for the rest.
 */
interface Line {
  needsEscape: string;
  plain: string;
  escaped: string;
}

const same = (sql: string) => ({ plain: sql, escaped: sql });

/** Regular expressions (PostgreSQL string literals) for text that CSV must quote, and that JSON must escape. */
const CSV_SPECIAL = String.raw`'[",\r\n]'`;
const JSON_SPECIAL = String.raw`'[\x01-\x1f"\\]'`;

const lineSql = (line: Line) =>
  `CASE WHEN concat(${TEXT_COLUMNS.join(', ')}) ~ ${line.needsEscape} THEN ${line.escaped} ELSE ${line.plain} END`;

/** A CSV cell: quoted, with quotes doubled, when it holds a quote, a comma or a line break; NULL is empty. */
const csvQuoted = (value: string) =>
  `COALESCE(CASE WHEN ${value} ~ ${CSV_SPECIAL} THEN '"' || replace(${value}, '"', '""') || '"' ELSE ${value} END, '')`;

function csvLine(omitSessionIds: boolean): string {
  const text = (column: string) => ({ plain: `COALESCE(${column}, '')`, escaped: csvQuoted(column) });
  const cells = [
    text('request_id'),
    same(isoText('ts')),
    text('model'),
    text('key_id'),
    text('key_label'),
    omitSessionIds ? same(`''`) : text('session_id'),
    text('upstream'),
    text('provider'),
    text('served_by'),
    same('attempts::text'),
    same('status::text'),
    same('stream::text'),
    same('is_byok::text'),
    same('tokens_prompt::text'),
    same('tokens_completion::text'),
    same('cache_read::text'),
    same('cache_write::text'),
    same('reasoning_tokens::text'),
    same(numberText('total_cost_usd')),
    same(numberText('cache_discount_usd')),
    same(numberText('credits_charged')),
    same(`COALESCE(latency_ms::text, '')`),
    same(`COALESCE(ttft_ms::text, '')`),
  ];
  // concat_ws builds the line in one pass; every cell is non-NULL, so none is skipped.
  const row = (pick: 'plain' | 'escaped') =>
    `concat_ws(',', ${cells.map((cell) => cell[pick]).join(', ')}) || E'\\r\\n'`;
  return lineSql({ needsEscape: CSV_SPECIAL, plain: row('plain'), escaped: row('escaped') });
}

/** The spec's UsageGeneration as one JSON line, keys in the order the requests list writes them. */
function jsonLine(omitSessionIds: boolean): string {
  const raw = (name: string, value: string) => same(`',"${name}":' || ${value}`);
  // A NULL column makes its whole field NULL, which concat leaves out: the field is absent, as in the spec.
  const text = (name: string, column: string) => ({
    plain: `',"${name}":"' || ${column} || '"'`,
    escaped: `',"${name}":' || to_json(${column})::text`,
  });
  const fields = [
    {
      plain: `'{"id":"' || COALESCE(NULLIF(event_id, ''), request_id) || '"'`,
      escaped: `'{"id":' || to_json(COALESCE(NULLIF(event_id, ''), request_id))::text`,
    },
    raw('object', `'"usage_generation"'`),
    text('request_id', 'request_id'),
    raw('ts', `'"' || ${isoText('ts')} || '"'`),
    text('model', 'model'),
    text('key_id', 'key_id'),
    text('key_label', 'key_label'),
    ...(omitSessionIds ? [] : [text('session_id', 'session_id')]),
    raw('native_tokens_prompt', 'tokens_prompt::text'),
    raw('native_tokens_completion', 'tokens_completion::text'),
    raw('cache_read', 'cache_read::text'),
    raw('cache_write', 'cache_write::text'),
    raw('reasoning_tokens', 'reasoning_tokens::text'),
    raw('total_cost_usd', numberText('total_cost_usd')),
    raw('cache_discount', numberText('cache_discount_usd')),
    raw('credits_charged', numberText('credits_charged')),
    raw('is_byok', 'is_byok::text'),
    raw('status', 'status::text'),
    raw('latency_ms', 'latency_ms::text'),
    raw('ttft_ms', 'ttft_ms::text'),
    raw('stream', 'stream::text'),
    text('upstream', `COALESCE(upstream, '')`),
    text('provider', `COALESCE(provider, '')`),
    text('served_by', `COALESCE(served_by, '')`),
    raw('attempts', 'attempts::text'),
    raw('cache_hit', 'cache_hit::text'),
    same(`E'}\\n'`),
  ];
  const row = (pick: 'plain' | 'escaped') => `concat(${fields.map((field) => field[pick]).join(', ')})`;
  return lineSql({ needsEscape: JSON_SPECIAL, plain: row('plain'), escaped: row('escaped') });
}

export function addUp(all: Metrics[]): Metrics {
  const total = { ...ZERO_METRICS };
  // Money is summed in whole units: each decimal holds whole units, so the conversions are exact.
  let credits = microcredits(0);
  let listUsd = nanoUsd(0);
  for (const m of all) {
    total.requests += m.requests;
    total.failed += m.failed;
    total.tokensIn += m.tokensIn;
    total.tokensOut += m.tokensOut;
    total.cacheRead += m.cacheRead;
    total.cacheWrite += m.cacheWrite;
    credits = microcredits(credits + microcreditsFromCredits(m.credits));
    listUsd = nanoUsd(listUsd + nanoUsdFromUsd(m.listUsd, 'nearest'));
  }
  total.credits = creditsFromMicrocredits(credits);
  total.listUsd = usdFromNanoUsd(listUsd);
  return total;
}

/** Biggest first: by credits, then list cost, then calls; ties by id so the order is stable. */
function sortGroups(groups: GroupTotals[]): GroupTotals[] {
  return groups.sort(
    (a, b) =>
      b.metrics.credits - a.metrics.credits ||
      b.metrics.listUsd - a.metrics.listUsd ||
      b.metrics.requests - a.metrics.requests ||
      (a.id < b.id ? -1 : 1),
  );
}

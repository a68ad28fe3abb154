import type { Db } from './db';

interface Percentiles {
  count: number;
  p50?: number;
  p90?: number;
}

export interface WindowStats {
  accepted: number;
  byStatus: Record<string, number>;
  byLane: Record<string, number>;
  byRefusalCategory: Record<string, number>;
  totalS: Percentiles;
  queueWaitS: Percentiles;
  stages: Record<string, Percentiles>;
  sloMisses: number;
  buildBackoffs: number;
  xBackoffs: number;
  inFlight: number;
  /** Non-blocking accessibility findings of the builds finished in the window. */
  accessibility: { jobs: number; byImpact: Record<string, number>; byRule: Record<string, number> };
}

interface PercentileRow {
  n: bigint;
  p50: number | null;
  p90: number | null;
}

const toPercentiles = (row: PercentileRow | undefined): Percentiles => ({
  count: Number(row?.n ?? 0),
  ...(row?.p50 !== null && row?.p50 !== undefined ? { p50: round(row.p50) } : {}),
  ...(row?.p90 !== null && row?.p90 !== undefined ? { p90: round(row.p90) } : {}),
});

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

function countBy(rows: { key: string | null; n: bigint }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of rows) if (row.key !== null) counts[row.key] = Number(row.n);
  return counts;
}

/**
 * The lane over the last `hours`: jobs accepted in the window by status, lane and refusal category; p50/p90
 * of the total time of jobs finished in it, of their wait in the queue and of every stage span that ended in
 * it; total-time SLO misses; build and X API backoffs; what is in flight now; and the accessibility findings
 * the finished builds were recorded with.
 */
export async function windowStats(db: Db, hours: number, sloTotalS: number): Promise<WindowStats> {
  const since = new Date(Date.now() - hours * 3_600_000);
  const byStatus = await db.$queryRaw<
    { key: string; n: bigint }[]
  >`SELECT status AS key, count(*) AS n FROM build_jobs WHERE created_at >= ${since} GROUP BY status`;
  const byLane = await db.$queryRaw<
    { key: string; n: bigint }[]
  >`SELECT lane AS key, count(*) AS n FROM build_jobs WHERE created_at >= ${since} GROUP BY lane`;
  const byCategory = await db.$queryRaw<{ key: string | null; n: bigint }[]>`
    SELECT refusal_category AS key, count(*) AS n FROM build_jobs
    WHERE created_at >= ${since} AND refusal_category IS NOT NULL GROUP BY refusal_category`;
  const [total] = await db.$queryRaw<PercentileRow[]>`
    SELECT count(*) AS n,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at))::float8 AS p50,
      percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at))::float8 AS p90
    FROM build_jobs WHERE status = 'done' AND finished_at >= ${since}`;
  const [wait] = await db.$queryRaw<PercentileRow[]>`
    SELECT count(*) AS n,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - created_at))::float8 AS p50,
      percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - created_at))::float8 AS p90
    FROM build_jobs WHERE started_at >= ${since}`;
  const stageRows = await db.$queryRaw<(PercentileRow & { stage: string })[]>`
    SELECT stage, count(*) AS n,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - started_at))::float8 AS p50,
      percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM ended_at - started_at))::float8 AS p90
    FROM job_stage_spans WHERE ended_at >= ${since} GROUP BY stage`;
  const [misses] = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM build_jobs
    WHERE status = 'done' AND finished_at >= ${since} AND extract(epoch FROM finished_at - created_at) > ${sloTotalS}`;
  const buildBackoffs = await db.jobEvent.count({ where: { type: 'backoff', at: { gte: since } } });
  const xBackoffs = await db.laneEvent.count({ where: { type: 'x_rate_limited', at: { gte: since } } });
  const inFlight = await db.buildJob.count({
    where: { status: { in: ['screening', 'building', 'auditing', 'publishing', 'verifying', 'fixing', 'drafting'] } },
  });
  const [a11yJobs] = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM build_jobs
    WHERE status = 'done' AND finished_at >= ${since} AND jsonb_array_length(accessibility) > 0`;
  const byImpact = await db.$queryRaw<{ key: string | null; n: bigint }[]>`
    SELECT finding->>'impact' AS key, count(*) AS n FROM build_jobs, jsonb_array_elements(accessibility) AS finding
    WHERE status = 'done' AND finished_at >= ${since} GROUP BY 1`;
  const byRule = await db.$queryRaw<{ key: string | null; n: bigint }[]>`
    SELECT finding->>'rule' AS key, count(*) AS n FROM build_jobs, jsonb_array_elements(accessibility) AS finding
    WHERE status = 'done' AND finished_at >= ${since} GROUP BY 1`;
  const statusCounts = countBy(byStatus);
  return {
    accepted: Object.values(statusCounts).reduce((sum, n) => sum + n, 0),
    byStatus: statusCounts,
    byLane: countBy(byLane),
    byRefusalCategory: countBy(byCategory),
    totalS: toPercentiles(total),
    queueWaitS: toPercentiles(wait),
    stages: Object.fromEntries(stageRows.map((row) => [row.stage, toPercentiles(row)])),
    sloMisses: Number(misses?.n ?? 0),
    buildBackoffs,
    xBackoffs,
    inFlight,
    accessibility: { jobs: Number(a11yJobs?.n ?? 0), byImpact: countBy(byImpact), byRule: countBy(byRule) },
  };
}

/** Median run time (claim to settle) of recent finished builds, for intake's `eta_s`; undefined without history. */
export async function recentMedianRunSeconds(db: Db): Promise<number | undefined> {
  const since = new Date(Date.now() - 24 * 3_600_000);
  const [row] = await db.$queryRaw<{ p50: number | null }[]>`
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at))::float8 AS p50
    FROM build_jobs WHERE status = 'done' AND finished_at >= ${since} AND started_at IS NOT NULL`;
  return row?.p50 ?? undefined;
}

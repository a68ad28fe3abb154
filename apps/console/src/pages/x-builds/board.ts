import type { XBuild } from '../../api/types';

/** The board's columns, each the job statuses it holds, in the order a job moves through them. */
const BOARD_COLUMNS = [
  { title: 'Queued', statuses: ['queued'] },
  {
    title: 'In progress',
    statuses: ['screening', 'building', 'auditing', 'publishing', 'verifying', 'fixing', 'drafting'],
  },
  { title: 'Done', statuses: ['done'] },
  { title: 'Stopped', statuses: ['refused', 'failed', 'cancelled'] },
] as const satisfies readonly { title: string; statuses: readonly XBuild['status'][] }[];

/** Jobs per column; the queued ones in dispatch order, the rest as listed (newest first). */
export function boardOf(jobs: readonly XBuild[]): { title: string; jobs: XBuild[] }[] {
  return BOARD_COLUMNS.map((column) => {
    const held = jobs.filter((job) => (column.statuses as readonly string[]).includes(job.status));
    if (column.title === 'Queued') held.sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity));
    return { title: column.title, jobs: held };
  });
}

/** Build time assumed until the lane has a median, as the service itself assumes. */
const DEFAULT_BUILD_S = 60;

/**
 * Seconds until the job is likely done, estimated the way the service estimates `eta_s` on intake: a queued job
 * waits for the builds ahead of it, `concurrency` at a time, each taking the lane's median; a job in progress
 * needs what is left of one median. Nothing for a settled job.
 */
export function etaSeconds(
  job: Pick<XBuild, 'status' | 'position' | 'created_at' | 'stages'>,
  lane: { concurrency: number; medianBuildS: number | null | undefined },
  now: number,
): number | undefined {
  const buildS = lane.medianBuildS ?? DEFAULT_BUILD_S;
  if (job.status === 'queued') {
    const position = job.position ?? 1;
    return Math.ceil(Math.ceil(position / Math.max(1, lane.concurrency)) * buildS);
  }
  if (['done', 'refused', 'failed', 'cancelled'].includes(job.status)) return undefined;
  const startedAt = Date.parse(job.stages?.[0]?.started_at ?? job.created_at ?? '');
  const elapsedS = Number.isNaN(startedAt) ? 0 : (now - startedAt) / 1000;
  return Math.max(0, Math.ceil(buildS - elapsedS));
}

/** `42 s`, `3 min 5 s`, `1 h 2 min`: a duration as a person reads it. */
export function seconds(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const whole = Math.round(value);
  if (whole < 60) return `${value < 10 && value % 1 !== 0 ? value.toFixed(1) : whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min${whole % 60 ? ` ${whole % 60} s` : ''}`;
  return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { JobSchema, QueueViewSchema, SourceSchema } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import { appUrlOf } from '../pipeline/reply';
import type { AppRow } from '../store/apps';
import type { Db } from '../store/db';
import {
  findingsOf,
  queueRanks,
  spansOf,
  type AccessibilityFinding,
  type CheckResult,
  type JobRow,
  type SpanRow,
} from '../store/jobs';
import { mediaKindsOf, type MediaKind } from '../store/media';
import type { QueueState } from '../store/queue';

type JobMessage = MessageInitShape<typeof JobSchema>;

export interface ViewContext {
  baseUrl: string;
  appsDomain: string;
}

const seconds = (from: Date, to: Date) => Math.round((to.getTime() - from.getTime()) / 10) / 100;
const ts = (date: Date | null | undefined) => (date ? timestampFromDate(date) : undefined);

function sourceOf(job: JobRow): MessageInitShape<typeof SourceSchema> {
  const source = job.source as Record<string, string | undefined>;
  if (job.lane === 'x') {
    return {
      kind: {
        case: 'x',
        value: {
          postId: source.post_id ?? '',
          authorId: source.author_id ?? job.authorId,
          conversationId: source.conversation_id,
          text: source.text ?? job.prompt,
        },
      },
    };
  }
  return { kind: { case: 'api', value: { prompt: source.prompt ?? job.prompt, title: source.title } } };
}

/** The job view of CONTRACTS "X builds": stages with timings, place in the queue, app, refusal and reply. */
function toJobMessage(
  ctx: ViewContext,
  job: JobRow,
  spans: SpanRow[],
  rank: number | undefined,
  app: AppRow | null,
  media: MediaKind[] = [],
): JobMessage {
  const checks = Array.isArray(job.checks) ? (job.checks as unknown as CheckResult[]) : [];
  const accessibility = Array.isArray(job.accessibility)
    ? (job.accessibility as unknown as AccessibilityFinding[])
    : [];
  return {
    id: job.id,
    status: job.status,
    lane: job.lane,
    source: sourceOf(job),
    authorId: job.authorId,
    prompt: job.prompt,
    slug: job.slug ?? undefined,
    appUrl: job.slug ? appUrlOf(ctx.baseUrl, ctx.appsDomain, job.slug) : undefined,
    position: job.status === 'queued' ? rank : undefined,
    pinned: job.pinned,
    stages: spans.map((span) => ({
      name: span.stage,
      startedAt: ts(span.startedAt),
      endedAt: ts(span.endedAt),
      seconds: span.endedAt ? seconds(span.startedAt, span.endedAt) : undefined,
    })),
    totalS: job.finishedAt ? seconds(job.createdAt, job.finishedAt) : undefined,
    refusal: job.refusalCategory ? { category: job.refusalCategory, reason: job.refusalReason ?? '' } : undefined,
    error: job.error ?? undefined,
    reply: job.replyText
      ? {
          text: job.replyText,
          status: job.replyStatus ?? 'skipped',
          postedAt: ts(job.replyPostedAt),
          postId: job.replyPostId ?? undefined,
        }
      : undefined,
    createdAt: ts(job.createdAt),
    updatedAt: ts(job.updatedAt),
    attempt: job.attempt,
    fixAttempts: job.fixAttempts,
    takenDownAt: app?.state === 'taken_down' ? ts(app.takenDownAt) : undefined,
    checks,
    model: job.model ?? undefined,
    accessibility,
    media,
    findings: findingsOf(job).map((finding) => ({ check: finding.check, message: finding.message })),
  };
}

/** Views of several jobs with what they need loaded in a few queries. */
export async function jobViews(db: Db, ctx: ViewContext, jobs: JobRow[]): Promise<JobMessage[]> {
  if (jobs.length === 0) return [];
  const ids = jobs.map((job) => job.id);
  const spans = await spansOf(db, ids);
  const ranks = jobs.some((job) => job.status === 'queued') ? await queueRanks(db) : new Map<string, number>();
  const apps = new Map((await db.app.findMany({ where: { jobId: { in: ids } } })).map((app) => [app.jobId, app]));
  const media = await mediaKindsOf(db, ids);
  return jobs.map((job) =>
    toJobMessage(ctx, job, spans.get(job.id) ?? [], ranks.get(job.id), apps.get(job.id) ?? null, media.get(job.id)),
  );
}

export async function jobView(db: Db, ctx: ViewContext, job: JobRow): Promise<JobMessage> {
  return (await jobViews(db, ctx, [job]))[0]!;
}

export function toQueueMessage(state: QueueState): MessageInitShape<typeof QueueViewSchema> {
  return {
    paused: state.settings.paused,
    maxConcurrent: state.settings.maxConcurrent,
    maxQueue: state.settings.maxQueue,
    queued: state.queued,
    running: state.running,
    effectiveConcurrency: state.effectiveConcurrency,
    backoffUntil:
      state.settings.backoffUntil && state.settings.backoffUntil > new Date()
        ? timestampFromDate(state.settings.backoffUntil)
        : undefined,
    pausedReason: state.settings.paused ? (state.settings.pausedReason ?? 'operator') : undefined,
    order: state.order,
  };
}

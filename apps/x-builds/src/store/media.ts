import { createHash } from 'node:crypto';
import type { Db, XBuildsDb } from './db';

/** What verification records: a screenshot per viewport and the motion clip. */
export const MEDIA_KINDS = ['screenshot', 'screenshot_mobile', 'clip'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

export const isMediaKind = (value: string): value is MediaKind => (MEDIA_KINDS as readonly string[]).includes(value);

/**
 * HTTP's byte ranges as the edge parsed them: `start-end` (end inclusive, open-ended without it) or `-suffixLength`.
 */
interface ByteRange {
  start?: number;
  end?: number;
  suffixLength?: number;
}

export interface MediaRead {
  jobId: string;
  kind: MediaKind;
  range?: ByteRange;
  /** HTTP If-Range: the range is served only while the media still has this ETag. */
  ifRange?: string;
  /** HTTP If-None-Match: ETags the caller already holds. */
  ifNoneMatch?: string[];
}

interface MediaMeta {
  contentType: string;
  etag: string;
  size: number;
  createdAt: Date;
}

export type Plan =
  | { kind: 'not_modified' }
  | { kind: 'unsatisfiable' }
  | { kind: 'full' }
  | { kind: 'range'; start: number; end: number };

export type MediaAnswer = MediaMeta &
  (
    | { kind: 'not_modified' }
    | { kind: 'unsatisfiable' }
    | { kind: 'full'; body: Uint8Array }
    | { kind: 'range'; start: number; body: Uint8Array }
  );

const etagOf = (sha256: string) => `"${sha256.slice(0, 32)}"`;

/** Weak comparison, as If-None-Match uses: `W/"x"` matches `"x"`, and `*` matches anything. */
function matchesAny(etag: string, candidates: string[]): boolean {
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return candidates.some((candidate) => candidate.trim() === '*' || strip(candidate) === etag);
}

/**
 * What to send for a request, from the media's size and ETag alone: nothing (the caller's copy is current),
 * a 416, the whole file, or one byte range. A range that ends past the file is cut at its end; one that starts
 * past it cannot be served. If-Range with another ETag (or a weak one) asks for the whole file instead.
 */
export function planRead(
  meta: { etag: string; size: number },
  request: Pick<MediaRead, 'range' | 'ifRange' | 'ifNoneMatch'>,
): Plan {
  if (request.ifNoneMatch?.length && matchesAny(meta.etag, request.ifNoneMatch)) return { kind: 'not_modified' };
  const range = request.range;
  if (!range || (request.ifRange !== undefined && request.ifRange !== meta.etag)) return { kind: 'full' };
  if (range.suffixLength !== undefined) {
    if (range.suffixLength <= 0 || meta.size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, meta.size - range.suffixLength), end: meta.size - 1 };
  }
  const start = range.start ?? 0;
  if (start >= meta.size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end: Math.min(range.end ?? meta.size - 1, meta.size - 1) };
}

/** Replaces a job's media with what its latest verification recorded (a kind it did not record is gone too). */
export async function replaceMedia(
  db: Db,
  jobId: string,
  media: { kind: MediaKind; contentType: string; body: Buffer }[],
): Promise<void> {
  await db.jobMedia.deleteMany({ where: { jobId } });
  for (const { kind, contentType, body } of media) {
    const sha256 = createHash('sha256').update(body).digest('hex');
    await db.jobMedia.create({ data: { jobId, kind, contentType, body: new Uint8Array(body), sha256 } });
  }
}

/** The kinds of media a job has, in MEDIA_KINDS order. */
export async function mediaKindsOf(db: Db, jobIds: string[]): Promise<Map<string, MediaKind[]>> {
  const rows = await db.jobMedia.findMany({ where: { jobId: { in: jobIds } }, select: { jobId: true, kind: true } });
  const byJob = new Map<string, MediaKind[]>();
  for (const row of rows) if (isMediaKind(row.kind)) byJob.set(row.jobId, [...(byJob.get(row.jobId) ?? []), row.kind]);
  for (const kinds of byJob.values()) kinds.sort((a, b) => MEDIA_KINDS.indexOf(a) - MEDIA_KINDS.indexOf(b));
  return byJob;
}

/**
 * Reads one medium for the edge: its metadata first, then only the bytes the plan needs (a clip's range is
 * cut by PostgreSQL, not shipped whole). Both reads see one snapshot, so a re-recording in between cannot
 * mix two files. Undefined when the job has no such medium.
 */
export async function readMedia(db: XBuildsDb, request: MediaRead): Promise<MediaAnswer | undefined> {
  return db.$transaction(
    async (tx) => {
      const [row] = await tx.$queryRaw<{ content_type: string; sha256: string; size: bigint; created_at: Date }[]>`
        SELECT content_type, sha256, octet_length(body)::int8 AS size, created_at FROM job_media
        WHERE job_id = ${request.jobId} AND kind = ${request.kind}`;
      if (!row) return undefined;
      const meta: MediaMeta = {
        contentType: row.content_type,
        etag: etagOf(row.sha256),
        size: Number(row.size),
        createdAt: row.created_at,
      };
      const plan = planRead(meta, request);
      if (plan.kind === 'not_modified' || plan.kind === 'unsatisfiable') return { ...meta, kind: plan.kind };
      const from = plan.kind === 'range' ? plan.start : 0;
      const length = plan.kind === 'range' ? plan.end - plan.start + 1 : meta.size;
      const [part] = await tx.$queryRaw<{ part: Uint8Array }[]>`
        SELECT substring(body FROM ${from + 1}::int FOR ${length}::int) AS part FROM job_media
        WHERE job_id = ${request.jobId} AND kind = ${request.kind}`;
      const body = part!.part;
      return plan.kind === 'range'
        ? { ...meta, kind: 'range', start: plan.start, body }
        : { ...meta, kind: 'full', body };
    },
    { isolationLevel: 'RepeatableRead' },
  );
}

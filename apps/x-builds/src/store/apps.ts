import { createHash, randomBytes } from 'node:crypto';
import type { App } from '../generated/prisma/client';
import type { Db, XBuildsDb } from './db';

export type AppRow = App;

const SLUG_WORDS = 3;
const SLUG_SUFFIX_CHARS = 6;
const BASE36 = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A DNS label from the first words of a title, plus a random suffix: readable, unguessable, unique in practice. */
function slugFor(title: string): string {
  const words = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9\s-]/g, ' ')
    .split(/[\s-]+/)
    .filter(Boolean)
    .slice(0, SLUG_WORDS);
  const stem = words.join('-').slice(0, 40).replace(/-+$/, '') || 'app';
  const suffix = Array.from(randomBytes(SLUG_SUFFIX_CHARS), (byte) => BASE36[byte % BASE36.length]).join('');
  return `${stem}-${suffix}`;
}

export interface PublishInput {
  jobId: string;
  title: string;
  html: string;
  csp: string;
}

/**
 * Publishes a job's bundle as an immutable set of files. A job keeps its slug across re-publishes (a fix
 * after a failed verification): the new bundle is written beside the old one and the app points at it.
 */
export async function publishBundle(db: XBuildsDb, input: PublishInput): Promise<{ app: AppRow; bundleId: string }> {
  const body = Buffer.from(input.html, 'utf8');
  const sha256 = createHash('sha256').update(body).digest('hex');
  const bundleId = `bnd_${sha256.slice(0, 24)}_${randomBytes(4).toString('hex')}`;
  return db.$transaction(async (tx) => {
    const existing = await tx.app.findUnique({ where: { jobId: input.jobId } });
    const appId = existing?.id ?? `app_${input.jobId.slice(4)}`;
    if (!existing) {
      // A slug collision is astronomically unlikely; the unique index would refuse it and the stage retries.
      await tx.app.create({
        data: { id: appId, slug: slugFor(input.title), jobId: input.jobId, bundleId, state: 'live', csp: input.csp },
      });
    }
    await tx.appFile.create({
      data: {
        bundleId,
        path: '/index.html',
        appId,
        contentType: 'text/html; charset=utf-8',
        body: new Uint8Array(body),
        sha256,
      },
    });
    const app = await tx.app.update({
      where: { id: appId },
      data: { bundleId, state: 'live', csp: input.csp, takenDownAt: null, takenDownReason: null },
    });
    return { app, bundleId };
  });
}

export async function findAppOfJob(db: Db, jobId: string): Promise<AppRow | null> {
  return db.app.findUnique({ where: { jobId } });
}

export async function countLiveApps(db: Db): Promise<number> {
  return db.app.count({ where: { state: 'live' } });
}

/**
 * Marks an app taken down and deletes its job's screenshots and clip with it (they show what was taken down);
 * false when it already was.
 */
export async function takeDown(db: XBuildsDb, appId: string, reason: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.app.updateMany({
      where: { id: appId, state: 'live' },
      data: { state: 'taken_down', takenDownAt: new Date(), takenDownReason: reason },
    });
    await tx.jobMedia.deleteMany({ where: { job: { app: { id: appId } } } });
    return count === 1;
  });
}

export type AppFileLookup =
  | { state: 'missing' }
  | { state: 'taken_down' }
  | { state: 'live'; contentType: string; body: Uint8Array; csp: string; bundleId: string };

/** One file of the current bundle behind a slug; `/` is the app's index page. */
export async function findAppFile(db: Db, slug: string, path: string): Promise<AppFileLookup> {
  const app = await db.app.findUnique({ where: { slug } });
  if (!app) return { state: 'missing' };
  if (app.state !== 'live') return { state: 'taken_down' };
  const file = await db.appFile.findUnique({
    where: { bundleId_path: { bundleId: app.bundleId, path: path === '/' ? '/index.html' : path } },
  });
  if (!file) return { state: 'missing' };
  return { state: 'live', contentType: file.contentType, body: file.body, csp: app.csp, bundleId: app.bundleId };
}

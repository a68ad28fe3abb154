import { randomUUID } from 'node:crypto';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { XPollerConfig } from '../config';
import { admit, type IntakeLimits } from '../intake/admit';
import { blockAuthor, isBlocked } from '../store/blocks';
import type { XBuildsDb } from '../store/db';
import { readSettings } from '../store/queue';
import { createXClient, type Mention, type XClient, type XFailure } from './client';

export interface XPollerDeps {
  db: XBuildsDb;
  config: XPollerConfig;
  limits: IntakeLimits;
  logger: Logger;
  notConfigured: () => string | undefined;
  wake: () => void;
  /** Injectable for tests; defaults to the real API at config.apiBaseUrl. */
  client?: XClient;
}

export interface XPoller {
  start(): void;
  /** One round now: poll mentions and send due replies (tests; the timer calls the same). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

const MAX_PAGES = 10;
const REPLY_WINDOW_MS = 15 * 60_000;
/** 403s on replies to this many different authors in a row mean the account, not the authors, is refused. */
const ACCOUNT_WIDE_403S = 3;
const DEFAULT_RATE_WAIT_MS = 60_000;
const OPT_OUT = /\b(opt[- ]?out|unsubscribe)\b/i;

async function laneEvent(db: XBuildsDb, type: string, data: Record<string, unknown>): Promise<void> {
  await db.laneEvent.create({ data: { type, data: data as object } });
}

/**
 * The X intake: one replica at a time (a lease row in queue_settings) polls the mentions timeline with
 * `since_id`, admits new mentions through the same intake as the API (idempotent on the post id), and posts
 * the replies of finished X jobs once each (with the app's screenshot attached), within X's per-user post limit.
 */
export function createXPoller(deps: XPollerDeps): XPoller {
  const { db, config, logger } = deps;
  const client =
    deps.client ??
    createXClient({
      baseUrl: config.apiBaseUrl,
      bearerToken: config.bearerToken,
      userAccessToken: config.userAccessToken,
      accountId: config.accountId,
    });
  const owner = `pol_${randomUUID()}`;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const forbiddenAuthors = new Set<string>();

  async function holdLease(): Promise<boolean> {
    const until = new Date(Date.now() + config.pollMs * 3);
    const { count } = await db.queueSettings.updateMany({
      where: { id: 1, OR: [{ pollerOwner: null }, { pollerOwner: owner }, { pollerUntil: { lt: new Date() } }] },
      data: { pollerOwner: owner, pollerUntil: until },
    });
    return count === 1;
  }

  /** An account-wide refusal by X (401, a 403 on reading mentions): intake is paused until an operator resumes it. */
  async function pauseFor(reason: string, failure: XFailure): Promise<void> {
    await db.queueSettings.update({
      where: { id: 1 },
      data: { paused: true, pausedReason: reason, updatedAt: new Date() },
    });
    await laneEvent(db, 'x_paused', { reason, status: failure.status });
    logger.error({ reason, status: failure.status }, 'X refused the account: intake paused');
  }

  async function rateLimited(column: 'xResetAt' | 'xReplyResetAt', failure: XFailure, call: string): Promise<void> {
    const resetAt = failure.resetAt ?? new Date(Date.now() + DEFAULT_RATE_WAIT_MS);
    await db.queueSettings.update({ where: { id: 1 }, data: { [column]: resetAt } });
    await laneEvent(db, 'x_rate_limited', { call, reset_at: resetAt.toISOString() });
    logger.warn({ call, resetAt }, 'X rate limit reached: waiting for the reset');
  }

  async function fetchNewMentions(
    sinceId: string | undefined,
  ): Promise<{ mentions: Mention[]; newestId?: string } | undefined> {
    const mentions: Mention[] = [];
    let newestId: string | undefined;
    let token: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const answer = await client.mentions(sinceId, token);
      if (!answer.ok) {
        if (answer.status === 429) await rateLimited('xResetAt', answer, 'mentions');
        else if (answer.status === 401) await pauseFor('x_unauthorized', answer);
        else if (answer.status === 403) await pauseFor('x_forbidden', answer);
        else logger.warn({ status: answer.status }, 'reading X mentions failed; retrying next round');
        return undefined;
      }
      // The first page holds the newest mention: it becomes the cursor once every page is admitted.
      if (page === 0) newestId = answer.newestId;
      mentions.push(...answer.mentions);
      token = answer.nextToken;
      if (!token) break;
    }
    return { mentions, newestId };
  }

  async function admitMention(mention: Mention): Promise<boolean> {
    if (mention.author_id === config.accountId) return false;
    if (mention.referenced_tweets?.some((ref) => ref.type === 'retweeted')) return false;
    if (await isBlocked(db, mention.author_id)) return false;
    if (OPT_OUT.test(mention.text)) {
      await blockAuthor(db, mention.author_id, 'optout', 'x-poller');
      return false;
    }
    try {
      const admission = await admit(
        { db, limits: deps.limits, notConfigured: deps.notConfigured },
        {
          userId: config.operatorUserId,
          bounds: { allowedModels: null, route: 'auto', boundByKey: false },
          source: {
            type: 'x',
            postId: mention.id,
            authorId: mention.author_id,
            conversationId: mention.conversation_id,
            text: mention.text,
          },
        },
      );
      return !admission.existing;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // An intake refusal is final for that mention; it is counted, and no job is left behind.
      await laneEvent(db, 'x_intake_refused', { post_id: mention.id, code: error.code });
      return false;
    }
  }

  async function pollMentions(): Promise<void> {
    const settings = await readSettings(db);
    if (settings.paused) return;
    if (settings.xResetAt && settings.xResetAt > new Date()) return;
    const found = await fetchNewMentions(settings.xSinceId ?? undefined);
    if (!found) return;
    let admitted = 0;
    // Oldest first, so the queue keeps the order people asked in.
    for (const mention of [...found.mentions].reverse()) if (await admitMention(mention)) admitted += 1;
    if (found.newestId) await db.queueSettings.update({ where: { id: 1 }, data: { xSinceId: found.newestId } });
    if (admitted > 0) {
      logger.info({ admitted }, 'admitted X mentions');
      deps.wake();
    }
  }

  /**
   * Uploads the job's desktop screenshot for its reply. A rate limit or a refused token holds the reply back
   * (`wait`); any other failure only costs the picture: the reply goes out as text.
   */
  async function attachScreenshot(jobId: string): Promise<{ ids: string[]; wait?: XFailure }> {
    const screenshot = await db.jobMedia.findUnique({ where: { jobId_kind: { jobId, kind: 'screenshot' } } });
    if (!screenshot) return { ids: [] };
    const upload = await client.uploadImage(screenshot.body, screenshot.contentType);
    if (upload.ok) return { ids: [upload.mediaId] };
    if (upload.status === 429 || upload.status === 401) return { ids: [], wait: upload };
    await db.jobEvent.create({
      data: {
        jobId,
        type: 'reply_media_failed',
        fromStatus: 'done',
        toStatus: 'done',
        data: { status: upload.status },
      },
    });
    logger.warn(
      { job: jobId, status: upload.status },
      'the screenshot could not be uploaded to X: the reply goes out without it',
    );
    return { ids: [] };
  }

  async function sendReplies(): Promise<void> {
    if (!config.userAccessToken) return;
    const settings = await readSettings(db);
    if (settings.paused && settings.pausedReason?.startsWith('x_')) return;
    if (settings.xReplyResetAt && settings.xReplyResetAt > new Date()) return;
    const posted = await db.buildJob.count({
      where: { replyPostedAt: { gte: new Date(Date.now() - REPLY_WINDOW_MS) } },
    });
    const room = config.repliesPer15Min - posted;
    if (room <= 0) return;
    const due = await db.buildJob.findMany({
      where: { lane: 'x', replyStatus: 'pending', status: 'done' },
      orderBy: { finishedAt: 'asc' },
      take: room,
    });
    for (const job of due) {
      // Claimed before the call and never put back after an unknown outcome: X does not dedupe posts, so a
      // reply is posted at most once even if this replica dies mid-call.
      const claimed = await db.buildJob.updateMany({
        where: { id: job.id, replyStatus: 'pending' },
        data: { replyStatus: 'posting' },
      });
      if (claimed.count === 0) continue;
      const media = await attachScreenshot(job.id);
      if (media.wait) {
        // Nothing was posted: the reply waits for the next round as it was.
        await db.buildJob.update({ where: { id: job.id }, data: { replyStatus: 'pending' } });
        if (media.wait.status === 429) return rateLimited('xReplyResetAt', media.wait, 'media_upload');
        return pauseFor('x_unauthorized', media.wait);
      }
      const result = await client.reply(job.replyText ?? '', job.postId ?? '', media.ids);
      if (result.ok) {
        forbiddenAuthors.clear();
        await db.buildJob.update({
          where: { id: job.id },
          data: { replyStatus: 'posted', replyPostId: result.id, replyPostedAt: new Date() },
        });
        await db.jobEvent.create({
          data: {
            jobId: job.id,
            type: 'reply_posted',
            fromStatus: 'done',
            toStatus: 'done',
            data: { post_id: result.id, media_ids: media.ids },
          },
        });
        continue;
      }
      const definite =
        result.status === 403 ||
        (result.status >= 400 && result.status < 500 && result.status !== 429 && result.status !== 401);
      await db.buildJob.update({ where: { id: job.id }, data: { replyStatus: definite ? 'failed' : 'pending' } });
      if (result.status === 429) return rateLimited('xReplyResetAt', result, 'reply');
      if (result.status === 401) return pauseFor('x_unauthorized', result);
      if (result.status === 403) {
        forbiddenAuthors.add(job.authorId);
        if (forbiddenAuthors.size >= ACCOUNT_WIDE_403S) return pauseFor('x_forbidden', result);
        continue;
      }
      if (!definite) return;
    }
  }

  async function round(): Promise<void> {
    if (!(await holdLease())) return;
    await pollMentions();
    await sendReplies();
  }

  function tick(): Promise<void> {
    running ??= round()
      .catch((err: unknown) => logger.error({ err }, 'X poller round failed'))
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void tick().then(schedule);
    }, config.pollMs);
    timer.unref?.();
  }

  return {
    start() {
      void tick().then(schedule);
    },
    tick,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await db.queueSettings
        .updateMany({ where: { id: 1, pollerOwner: owner }, data: { pollerOwner: null, pollerUntil: null } })
        .catch(() => undefined);
    },
  };
}

import type { Prisma } from '../generated/prisma/client';
import type { XBuildsConfig } from '../config';
import type { JobStatus, Stage } from '../jobs/statuses';
import { auditHtml, contentSecurityPolicy } from '../pipeline/audit';
import { complete, type ChatMessage } from '../pipeline/model-client';
import { buildMessages, extractHtml, fixMessages, titleOf } from '../pipeline/prompts';
import { appUrlOf, draftReply } from '../pipeline/reply';
import { screenRequest } from '../pipeline/screening';
import { verifyLiveApp, type RecordedMedia } from '../pipeline/verify';
import { findAppOfJob, publishBundle, takeDown } from '../store/apps';
import type { XBuildsDb } from '../store/db';
import { findingsOf, type Finding, type JobChanges, type JobRow } from '../store/jobs';

/** What a stage decided: the next status, what to write with it, and how its span ended. */
export interface Step {
  to: JobStatus;
  set?: JobChanges;
  /** Screenshots and clip, written with the transition: only while the worker still holds the job. */
  media?: RecordedMedia[];
  event: string;
  data?: Record<string, unknown>;
  outcome: string;
}

export interface StageContext {
  db: XBuildsDb;
  config: XBuildsConfig;
  /** The job's build key, minted when it was claimed; held in memory only. */
  secret: string;
  gatewayUrl: string;
  verifyUrl: string;
  signal: AbortSignal;
  /** Tells every edge to drop a slug from its cache. */
  appChanged: (slug: string) => Promise<void>;
  /** Whether X replies can be posted (tokens configured). */
  xReplies: boolean;
  /** The Chromium verification runs (see findChromium); undefined records the browser checks as skipped. */
  chromiumPath?: string;
}

const json = (value: unknown) => value as Prisma.InputJsonValue;

async function callModel(ctx: StageContext, messages: ChatMessage[]): Promise<{ html: string; model: string }> {
  const answer = await complete({
    gatewayUrl: ctx.gatewayUrl,
    secret: ctx.secret,
    model: ctx.config.model,
    messages,
    maxTokens: ctx.config.maxOutputTokens,
    timeoutMs: ctx.config.modelTimeoutMs,
    signal: ctx.signal,
  });
  // An answer with no document still goes to the audit, which says what is wrong with it.
  return { html: extractHtml(answer.text) ?? answer.text, model: answer.model };
}

function afterFindings(ctx: StageContext, job: JobRow, findings: Finding[], from: string): Step {
  if (job.fixAttempts < ctx.config.maxFixAttempts) {
    return {
      to: 'fixing',
      set: { findings: json(findings) },
      event: `${from}_failed`,
      data: { findings: findings.map((f) => f.check) },
      outcome: 'findings',
    };
  }
  const summary = findings.map((f) => `${f.check}: ${f.message}`).join('; ');
  return {
    to: 'failed',
    set: {
      findings: json(findings),
      error: `The app still failed its checks after ${job.fixAttempts} repair(s): ${summary}`,
      finishedAt: new Date(),
    },
    event: `${from}_failed`,
    data: { findings: findings.map((f) => f.check), final: true },
    outcome: 'failed',
  };
}

async function screening(_ctx: StageContext, job: JobRow): Promise<Step> {
  const refusal = screenRequest(job.prompt);
  if (refusal) {
    return {
      to: 'refused',
      set: { refusalCategory: refusal.category, refusalReason: refusal.reason, finishedAt: new Date() },
      event: 'refused',
      data: { category: refusal.category },
      outcome: 'refused',
    };
  }
  return { to: 'building', event: 'screened', outcome: 'ok' };
}

async function building(ctx: StageContext, job: JobRow): Promise<Step> {
  const { html, model } = await callModel(ctx, buildMessages(job.prompt, ctx.config.simMarkers));
  return {
    to: 'auditing',
    set: { bundleHtml: html, model },
    event: 'built',
    data: { bytes: Buffer.byteLength(html) },
    outcome: 'ok',
  };
}

async function fixing(ctx: StageContext, job: JobRow): Promise<Step> {
  const { html, model } = await callModel(
    ctx,
    fixMessages(job.prompt, job.bundleHtml ?? '', findingsOf(job), ctx.config.simMarkers),
  );
  // A fix is always audited again.
  return {
    to: 'auditing',
    set: { bundleHtml: html, model, fixAttempts: { increment: 1 } },
    event: 'fixed',
    data: { attempt: job.fixAttempts + 1 },
    outcome: 'ok',
  };
}

async function auditing(ctx: StageContext, job: JobRow): Promise<Step> {
  const findings = auditHtml(job.bundleHtml ?? '', {
    maxBytes: ctx.config.maxBundleBytes,
    scriptAllowlist: ctx.config.scriptAllowlist,
  });
  const unsafe = findings.filter((f) => f.severity === 'unsafe');
  if (unsafe.length > 0) {
    return {
      to: 'refused',
      set: {
        findings: json(findings),
        refusalCategory: 'unsafe_output',
        refusalReason: unsafe.map((f) => f.message).join(' '),
        finishedAt: new Date(),
      },
      event: 'refused',
      data: { category: 'unsafe_output' },
      outcome: 'refused',
    };
  }
  if (findings.length > 0) return afterFindings(ctx, job, findings, 'audit');
  // The findings the last repair worked from stay on the job: they say why it was repaired.
  return { to: 'publishing', event: 'audited', outcome: 'ok' };
}

async function publishing(ctx: StageContext, job: JobRow): Promise<Step> {
  const { app, bundleId } = await publishBundle(ctx.db, {
    jobId: job.id,
    title: titleOf(job.prompt, job.title),
    html: job.bundleHtml ?? '',
    csp: contentSecurityPolicy(ctx.config.scriptAllowlist),
  });
  await ctx.appChanged(app.slug);
  return {
    to: 'verifying',
    set: { slug: app.slug },
    event: 'published',
    data: { slug: app.slug, bundle_id: bundleId },
    outcome: 'ok',
  };
}

async function verifying(ctx: StageContext, job: JobRow): Promise<Step> {
  const verification = await verifyLiveApp({
    edgeUrl: ctx.verifyUrl,
    host: `${job.slug}.${ctx.config.appsDomain}`,
    signal: ctx.signal,
    chromiumPath: ctx.chromiumPath,
  });
  const { checks, media } = verification;
  const recorded = { checks: json(checks), accessibility: json(verification.accessibility) };
  const failures = checks.filter((check) => check.outcome === 'failed');
  if (failures.length === 0) {
    return {
      to: 'drafting',
      set: recorded,
      media,
      event: 'verified',
      data: { media: media.map((m) => m.kind) },
      outcome: 'ok',
    };
  }
  const step = afterFindings(
    ctx,
    job,
    failures.map((check) => ({ check: check.name, message: check.detail, severity: 'fixable' })),
    'verification',
  );
  if (step.to === 'failed') {
    // A broken app does not stay up.
    const app = await findAppOfJob(ctx.db, job.id);
    if (app && (await takeDown(ctx.db, app.id, 'verification_failed'))) await ctx.appChanged(app.slug);
  }
  return { ...step, set: { ...step.set, ...recorded } };
}

async function drafting(ctx: StageContext, job: JobRow): Promise<Step> {
  const appUrl = appUrlOf(ctx.config.baseUrl, ctx.config.appsDomain, job.slug ?? '');
  const text = draftReply({ title: titleOf(job.prompt, job.title), appUrl, lane: job.lane });
  // X replies are posted once, by the reply sender, within X's per-user limits; API jobs only get the text.
  const replyStatus = job.lane === 'x' && ctx.xReplies ? 'pending' : 'skipped';
  return {
    to: 'done',
    set: { replyText: text, replyStatus, finishedAt: new Date() },
    event: 'done',
    data: { reply: replyStatus },
    outcome: 'ok',
  };
}

export const STAGE_RUNNERS: Record<Stage, (ctx: StageContext, job: JobRow) => Promise<Step>> = {
  screening,
  building,
  auditing,
  publishing,
  verifying,
  fixing,
  drafting,
};

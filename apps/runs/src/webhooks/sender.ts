import type { Logger } from '@sbc/logging';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import {
  abandonDelivery,
  claimDueDeliveries,
  recordAttempt,
  type AttemptRecord,
  type DueDelivery,
} from '../store/webhooks';
import type { Egress } from '../tools/egress';
import { nextAttemptDelayMs } from './schedule';
import { webhookHeaders } from '@sbc/webhooks';

export interface WebhookSenderDeps {
  db: RunsDb;
  egress: Egress;
  logger: Logger;
  /** An attempt that has no answer after this long has failed. */
  timeoutMs: number;
  pollMs: number;
  retryScheduleMs: readonly number[];
  /** Told each attempt's outcome (for the delivery metrics). */
  onOutcome?: (outcome: WebhookOutcome) => void;
}

type WebhookOutcome = 'delivered' | 'retry_scheduled' | 'exhausted' | 'endpoint_disabled';

export interface WebhookSender {
  start(): void;
  stop(): Promise<void>;
}

const BATCH = 10;
// A claimed delivery is held this much longer than an attempt can take before another sender may retry it.
const CLAIM_MARGIN_MS = 30_000;

function describeFailure(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const code = (error as { code?: string }).code;
  if (code === 'EGRESS_DENIED') return (error as Error).message;
  return code ? `the request failed (${code})` : 'the request failed';
}

/**
 * Sends the webhook outbox: claims due deliveries (SKIP LOCKED, so senders on every replica share the work),
 * posts each signed body, and records the attempt. 2xx delivers; 410 disables the endpoint; anything else is
 * retried on the schedule until it runs out.
 */
export function createWebhookSender(deps: WebhookSenderDeps): WebhookSender {
  let stopping = false;
  let wakeIdle: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  const { logger } = deps;

  async function attempt(due: DueDelivery): Promise<void> {
    const { delivery, endpoint, event } = due;
    if (endpoint.deletedAt || endpoint.disabledAt) return abandonDelivery(deps.db, delivery.id);
    const started = Date.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const reply = await deps.egress.send({
        url: new URL(endpoint.url),
        method: 'POST',
        headers: webhookHeaders(endpoint.secret, event.id, event.payload, new Date()),
        body: event.payload,
        signal: AbortSignal.timeout(deps.timeoutMs),
        maxBodyBytes: 4_096,
        dialAs: endpoint.dialAs === 'operator' ? 'operator' : 'tenant',
      });
      statusCode = reply.status;
    } catch (failure) {
      error = describeFailure(failure, deps.timeoutMs);
    }
    const failedAttempts = delivery.attempts + 1;
    let next: AttemptRecord['next'];
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) next = { status: 'succeeded' };
    else if (statusCode === 410) next = { status: 'failed' };
    else {
      const delay = nextAttemptDelayMs(deps.retryScheduleMs, failedAttempts);
      next =
        delay === undefined ? { status: 'failed' } : { status: 'pending', nextAttemptAt: new Date(Date.now() + delay) };
    }
    deps.onOutcome?.(
      statusCode === 410
        ? 'endpoint_disabled'
        : next.status === 'succeeded'
          ? 'delivered'
          : next.status === 'pending'
            ? 'retry_scheduled'
            : 'exhausted',
    );
    await recordAttempt(deps.db, due, {
      statusCode,
      error,
      durationMs: Date.now() - started,
      next,
      ...(statusCode === 410 ? { disableEndpoint: 'The endpoint answered 410 Gone.' } : {}),
    });
  }

  async function run(): Promise<void> {
    while (!stopping) {
      let due: DueDelivery[] = [];
      try {
        due = await claimDueDeliveries(deps.db, BATCH, deps.timeoutMs + CLAIM_MARGIN_MS);
        await Promise.all(
          due.map((item) =>
            attempt(item).catch((err: unknown) =>
              logger.error({ err, deliveryId: item.delivery.id }, 'recording a webhook attempt failed'),
            ),
          ),
        );
      } catch (err) {
        if (!stopping) logger.warn({ err }, 'claiming webhook deliveries failed');
      }
      if (due.length < BATCH && !stopping) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deps.pollMs);
          wakeIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }

  return {
    start() {
      loop = run();
    },
    async stop() {
      stopping = true;
      wakeIdle?.();
      await loop;
    },
  };
}

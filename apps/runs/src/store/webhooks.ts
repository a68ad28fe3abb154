import { newWebhookSecret } from '@sbc/webhooks';
import { ApiError } from '@sbc/errors';
import { newId } from '@sbc/ids';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import type {
  PrismaClient as RunsDb,
  WebhookAttempt as WebhookAttemptRow,
  WebhookDelivery as WebhookDeliveryRow,
  WebhookEndpoint as WebhookEndpointRow,
  WebhookEvent as WebhookEventRow,
} from '../generated/prisma/client';
import type { Tx } from './events';

export type { WebhookEndpointRow };

/** What an endpoint can subscribe to: one event per way a run settles. */
export const WEBHOOK_EVENT_TYPES = ['run.succeeded', 'run.failed', 'run.cancelled'] as const;

function webhookNotFound(): ApiError {
  return new ApiError('not_found', 'No such webhook endpoint on this account.', { param: 'webhook_id' });
}

export function eventsOf(row: Pick<WebhookEndpointRow, 'events'>): string[] {
  return Array.isArray(row.events) ? row.events.filter((event): event is string => typeof event === 'string') : [];
}

export async function createEndpoint(
  db: RunsDb,
  input: { accountId: string; url: string; events: string[]; dialAs: 'operator' | 'tenant' },
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const secret = newWebhookSecret();
  const endpoint = await db.webhookEndpoint.create({
    data: {
      id: newId('whk'),
      accountId: input.accountId,
      url: input.url,
      events: input.events,
      secret,
      dialAs: input.dialAs,
    },
  });
  return { endpoint, secret };
}

export async function listEndpoints(
  db: RunsDb,
  accountId: string,
  query: PageQuery,
): Promise<ListEnvelope<WebhookEndpointRow>> {
  const range = keysetRange(query);
  const rows = await db.webhookEndpoint.findMany({
    where: { accountId, deletedAt: null, ...(range.cursor ? { id: range.cursor } : {}) },
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows, query, (row) => row.id);
}

async function findEndpoint(db: RunsDb, accountId: string, endpointId: string): Promise<WebhookEndpointRow> {
  const row = await db.webhookEndpoint.findFirst({ where: { id: endpointId, accountId, deletedAt: null } });
  if (!row) throw webhookNotFound();
  return row;
}

/** Removes an endpoint, returning it as it was; deliveries still pending for it fail at their next attempt. */
export async function deleteEndpoint(
  db: RunsDb,
  accountId: string,
  endpointId: string,
  now: Date,
): Promise<WebhookEndpointRow> {
  const before = await findEndpoint(db, accountId, endpointId);
  await db.webhookEndpoint.update({ where: { id: endpointId }, data: { deletedAt: now } });
  return before;
}

/**
 * The outbox write of a settle, inside its transaction: one event (the exact body every endpoint receives) and
 * one delivery, due now, per live endpoint of the account subscribed to it. A settle that rolls back leaves
 * no delivery; a committed one always has its deliveries.
 */
export async function enqueueDeliveries(
  tx: Tx,
  settle: { accountId: string; runId: string; projectId: string; status: string },
): Promise<void> {
  const type = `run.${settle.status}`;
  const endpoints = (
    await tx.webhookEndpoint.findMany({ where: { accountId: settle.accountId, deletedAt: null, disabledAt: null } })
  ).filter((endpoint) => eventsOf(endpoint).includes(type));
  if (endpoints.length === 0) return;
  const now = new Date();
  const event = await tx.webhookEvent.create({
    data: {
      id: newId('evt'),
      accountId: settle.accountId,
      runId: settle.runId,
      type,
      payload: JSON.stringify({
        type,
        timestamp: now.toISOString(),
        data: { run_id: settle.runId, project_id: settle.projectId, status: settle.status },
      }),
    },
  });
  await tx.webhookDelivery.createMany({
    data: endpoints.map((endpoint) => ({
      id: newId('msg'),
      eventId: event.id,
      endpointId: endpoint.id,
      nextAttemptAt: now,
    })),
  });
}

export interface DueDelivery {
  delivery: WebhookDeliveryRow;
  event: WebhookEventRow;
  endpoint: WebhookEndpointRow;
}

/**
 * Claims up to `limit` due deliveries. The claim moves each one's next attempt past `holdMs` (the longest an
 * attempt can take), so a sender that dies mid-attempt leaves it to be tried again rather than lost.
 */
export async function claimDueDeliveries(db: RunsDb, limit: number, holdMs: number): Promise<DueDelivery[]> {
  const claimed = await db.$queryRaw<{ id: string }[]>`
    WITH due AS (
      SELECT id FROM webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= now()
      ORDER BY next_attempt_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => ${holdMs / 1000})
    FROM due WHERE d.id = due.id
    RETURNING d.id`;
  if (claimed.length === 0) return [];
  const deliveries = await db.webhookDelivery.findMany({ where: { id: { in: claimed.map((row) => row.id) } } });
  const events = new Map(
    (await db.webhookEvent.findMany({ where: { id: { in: deliveries.map((d) => d.eventId) } } })).map((e) => [e.id, e]),
  );
  const endpoints = new Map(
    (await db.webhookEndpoint.findMany({ where: { id: { in: deliveries.map((d) => d.endpointId) } } })).map((e) => [
      e.id,
      e,
    ]),
  );
  return deliveries.map((delivery) => ({
    delivery,
    event: events.get(delivery.eventId)!,
    endpoint: endpoints.get(delivery.endpointId)!,
  }));
}

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The delivery after this attempt: done, given up, or due again at `nextAttemptAt`. */
  next: { status: 'succeeded' | 'failed' } | { status: 'pending'; nextAttemptAt: Date };
  /** Set when the endpoint answered 410 Gone. */
  disableEndpoint?: string;
}

export async function recordAttempt(db: RunsDb, due: DueDelivery, record: AttemptRecord): Promise<void> {
  const attempt = due.delivery.attempts + 1;
  await db.$transaction(async (tx) => {
    await tx.webhookAttempt.create({
      data: {
        deliveryId: due.delivery.id,
        attempt,
        statusCode: record.statusCode,
        error: record.error,
        durationMs: record.durationMs,
      },
    });
    await tx.webhookDelivery.update({
      where: { id: due.delivery.id },
      data: {
        attempts: attempt,
        status: record.next.status,
        nextAttemptAt: record.next.status === 'pending' ? record.next.nextAttemptAt : null,
      },
    });
    if (record.disableEndpoint) {
      await tx.webhookEndpoint.updateMany({
        where: { id: due.endpoint.id, disabledAt: null },
        data: { disabledAt: new Date(), disabledReason: record.disableEndpoint },
      });
    }
  });
}

/**
 * Puts a failed delivery back in the outbox, due now: the sender makes one more attempt of the same event (same
 * `webhook-id` and body, a fresh timestamp and signature) and records it after the earlier ones. The delivery
 * has run out of retries, so a failed resend fails it again. Only a failed delivery of an enabled endpoint can
 * be resent; the status check and the change are one statement, so two resends at once queue one attempt.
 */
export async function resendDelivery(
  db: RunsDb,
  accountId: string,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryView> {
  const endpoint = await findEndpoint(db, accountId, endpointId);
  if (endpoint.disabledAt)
    throw new ApiError('conflict', `The endpoint is disabled (${endpoint.disabledReason ?? 'no reason given'}).`, {
      param: 'webhook_id',
    });
  const queued = await db.webhookDelivery.updateMany({
    where: { id: deliveryId, endpointId, status: 'failed' },
    data: { status: 'pending', nextAttemptAt: new Date() },
  });
  const delivery = await db.webhookDelivery.findFirst({ where: { id: deliveryId, endpointId } });
  if (!delivery) throw new ApiError('not_found', 'No such delivery to this endpoint.', { param: 'delivery_id' });
  if (queued.count === 0)
    throw new ApiError('conflict', `The delivery is ${delivery.status}; only a failed delivery can be resent.`, {
      param: 'delivery_id',
    });
  const [event, attempts] = await Promise.all([
    db.webhookEvent.findUniqueOrThrow({ where: { id: delivery.eventId } }),
    db.webhookAttempt.findMany({ where: { deliveryId }, orderBy: { attempt: 'asc' } }),
  ]);
  return { delivery, event, attempts };
}

/** A delivery that can no longer be attempted (its endpoint was deleted or disabled). */
export async function abandonDelivery(db: RunsDb, deliveryId: string): Promise<void> {
  await db.webhookDelivery.update({ where: { id: deliveryId }, data: { status: 'failed', nextAttemptAt: null } });
}

export interface DeliveryView {
  delivery: WebhookDeliveryRow;
  event: WebhookEventRow;
  attempts: WebhookAttemptRow[];
}

export async function listDeliveries(
  db: RunsDb,
  accountId: string,
  endpointId: string,
  query: PageQuery,
): Promise<ListEnvelope<DeliveryView>> {
  await findEndpoint(db, accountId, endpointId);
  const range = keysetRange(query);
  const rows = await db.webhookDelivery.findMany({
    where: { endpointId, ...(range.cursor ? { id: range.cursor } : {}) },
    orderBy: { id: range.order },
    take: range.take,
  });
  const page = toPage(rows, query, (row) => row.id);
  const ids = page.data.map((row) => row.id);
  const events = new Map(
    (await db.webhookEvent.findMany({ where: { id: { in: page.data.map((row) => row.eventId) } } })).map((e) => [
      e.id,
      e,
    ]),
  );
  const attempts = await db.webhookAttempt.findMany({
    where: { deliveryId: { in: ids } },
    orderBy: [{ deliveryId: 'asc' }, { attempt: 'asc' }],
  });
  return {
    ...page,
    data: page.data.map((delivery) => ({
      delivery,
      event: events.get(delivery.eventId)!,
      attempts: attempts.filter((a) => a.deliveryId === delivery.id),
    })),
  };
}

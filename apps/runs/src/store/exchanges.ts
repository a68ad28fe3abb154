import { newId } from '@sbc/ids';
import type { Prisma, PrismaClient as RunsDb } from '../generated/prisma/client';
import type { RedactedExchange } from '../tools/redact';

/** Stores one exchange, already redacted: nothing un-redacted is ever written. */
export async function recordExchange(db: RunsDb, runId: string, exchange: RedactedExchange): Promise<void> {
  await db.exchange.create({
    data: {
      id: newId('msg'),
      runId,
      host: new URL(exchange.url).hostname,
      method: exchange.method,
      url: exchange.url,
      status: exchange.status,
      request: exchange.request as Prisma.InputJsonObject,
      response: exchange.response as Prisma.InputJsonObject,
      recordedAt: new Date(exchange.time),
    },
  });
}

/** Exchanges oldest first, in the learner's `Exchange` shape (source `runs`). */
export async function listExchanges(
  db: RunsDb,
  options: { host?: string; after?: string; limit: number },
): Promise<{ exchanges: Record<string, unknown>[]; nextAfter?: string }> {
  const rows = await db.exchange.findMany({
    where: {
      ...(options.host ? { host: options.host.toLowerCase() } : {}),
      ...(options.after ? { id: { gt: options.after } } : {}),
    },
    orderBy: { id: 'asc' },
    take: options.limit + 1,
  });
  const page = rows.slice(0, options.limit);
  return {
    exchanges: page.map((row) => ({
      method: row.method,
      url: row.url,
      status: row.status,
      time: row.recordedAt.toISOString(),
      source: 'runs',
      request: row.request,
      response: row.response,
    })),
    nextAfter: rows.length > options.limit ? page.at(-1)?.id : undefined,
  };
}

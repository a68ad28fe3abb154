import { fromBinary } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import type { EventConsumer, EventHandler, Subscription } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import type { Logger } from '@sbc/logging';
import { UsageEventSchema, type UsageEvent } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import type { PrismaClient } from '../generated/prisma/client';
import { insertGeneration, type GenerationRow } from '../store/generations';

/** The ledger's consumer group: every replica shares it, so each event is applied by one of them. */
export const USAGE_LEDGER_GROUP_ID = 'usage-ledger';

/** Largest value a PostgreSQL `integer` column (latency_ms, ttft_ms) holds. */
const MAX_INT4 = 2 ** 31 - 1;
/** `numeric(18, 9)` keeps 9 digits before the point, `numeric(18, 6)` keeps 12. */
const MAX_USD = 1e9;
const MAX_CREDITS = 1e12;

export type DecodedUsageEvent = { row: GenerationRow } | { problem: string };

/**
 * Bytes from the bus to a `usage_generations` row, or the reason the ledger can never apply them: bytes that
 * are not a UsageEvent, or an event without the request id, account or timestamp the contract requires, or
 * with amounts the ledger's columns cannot hold. Retrying such a message cannot help, so it is not retried.
 */
export function decodeUsageEvent(bytes: Uint8Array): DecodedUsageEvent {
  let event: UsageEvent;
  try {
    event = fromBinary(UsageEventSchema, bytes);
  } catch (error) {
    return { problem: `not a UsageEvent: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!event.requestId) return { problem: 'no request_id' };
  if (!event.accountId) return { problem: 'no account_id' };
  const ts = event.ts ? new Date(timestampMs(event.ts)) : undefined;
  if (!ts || Number.isNaN(ts.getTime())) return { problem: 'no valid ts' };
  const money: [string, number, number][] = [
    ['list_cost_usd', event.listCostUsd, MAX_USD],
    ['credits_charged', event.creditsCharged, MAX_CREDITS],
    ['fair_use_credits', event.fairUseCredits, MAX_CREDITS],
  ];
  for (const [field, value, max] of money) {
    if (!Number.isFinite(value) || Math.abs(value) >= max) return { problem: `${field} out of range: ${value}` };
  }
  return { row: toGenerationRow(event, ts) };
}

function toGenerationRow(event: UsageEvent, ts: Date): GenerationRow {
  return {
    requestId: event.requestId,
    accountId: event.accountId,
    userId: orNull(event.userId),
    keyId: orNull(event.keyId),
    keyLabel: orNull(event.keyLabel),
    orgId: orNull(event.orgId),
    model: event.model,
    upstreamModel: orNull(event.upstreamModel),
    upstream: orNull(event.upstream),
    provider: orNull(event.provider),
    dialectIn: orNull(event.dialectIn),
    dialectOut: orNull(event.dialectOut),
    route: orNull(event.route),
    tokensPrompt: event.inputTokens,
    tokensCompletion: event.outputTokens,
    cacheRead: event.cacheReadTokens,
    cacheWrite: event.cacheWriteTokens,
    reasoningTokens: event.reasoningTokens,
    totalCostUsd: event.listCostUsd,
    // What cache reads saved against uncached input needs the model's input and cache-read prices, which the
    // event does not carry; 0 until the ledger prices calls (or the edge sends the figure).
    cacheDiscountUsd: 0,
    creditsCharged: event.creditsCharged,
    fairUseCredits: event.fairUseCredits,
    isByok: event.isByok,
    status: event.status,
    latencyMs: toInt4(event.latencyMs),
    // The edge sends 0 when no token was produced: stored as unknown, so averages count only real first tokens.
    ttftMs: event.ttftMs === 0n ? null : toInt4(event.ttftMs),
    stream: event.stream,
    sessionId: orNull(event.sessionId),
    ts,
  };
}

/** proto3 strings are '' when unset. */
function orNull(value: string | undefined): string | null {
  return value ? value : null;
}

/** A duration the column cannot hold is recorded as unknown rather than holding up the call's charge. */
function toInt4(value: bigint): number | null {
  return value >= 0n && value <= BigInt(MAX_INT4) ? Number(value) : null;
}

export interface UsageConsumerDeps {
  db: PrismaClient;
  logger: Logger;
}

/**
 * Applies one usage event. It resolves only once the row is committed (or was already there), and the bus
 * commits the offset only after that, so a crash in between means a redelivery, which the insert absorbs.
 * A database error rejects: the bus retries the same message with backoff and nothing behind it moves.
 * A message the ledger can never apply is logged and acknowledged, so it does not block its partition.
 */
export function createUsageEventHandler(deps: UsageConsumerDeps): EventHandler {
  return async (message) => {
    const decoded = decodeUsageEvent(message.value);
    if ('problem' in decoded) {
      deps.logger.error(
        { topic: message.topic, partition: message.partition, offset: message.offset, accountId: message.key, problem: decoded.problem },
        'usage event skipped: it cannot be applied',
      );
      return;
    }
    const inserted = await insertGeneration(deps.db, decoded.row);
    deps.logger.debug({ requestId: decoded.row.requestId, offset: message.offset }, inserted ? 'usage event applied' : 'usage event already applied');
  };
}

/** Consumes `usage.events.v1` as the ledger's group, from the oldest retained event when the group is new. */
export function subscribeUsageEvents(consumer: EventConsumer, deps: UsageConsumerDeps): Promise<Subscription> {
  return consumer.subscribe({ topic: USAGE_EVENTS_TOPIC, groupId: USAGE_LEDGER_GROUP_ID, fromBeginning: true, handler: createUsageEventHandler(deps) });
}

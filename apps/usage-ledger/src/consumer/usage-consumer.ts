import { fromBinary } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import type {
  BatchHandler,
  BatchOutcome,
  DeadLetterSink,
  EventConsumer,
  IncomingMessage,
  Subscription,
} from '@sbc/bus';
import { cacheDiscountNanoUsd, findCatalogModel } from '@sbc/catalog';
import { storableText, USAGE_EVENTS_TOPIC } from '@sbc/events';
import type { Logger } from '@sbc/logging';
import { UsageEventSchema, type UsageEvent } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import type { PrismaClient } from '../generated/prisma/client';
import { recordDeadLetter } from '../store/dead-letters';
import { applyGenerations, type GenerationRow } from '../store/generations';
import { classifyLedgerFailure, describeFailure } from './failure-kind';

/** The ledger's default consumer group (KAFKA_GROUP_ID): every replica shares it, so each event is applied once. */
const USAGE_LEDGER_GROUP_ID = 'usage-ledger';

/** Largest value a PostgreSQL `integer` column (latency_ms, ttft_ms) holds. */
const MAX_INT4 = 2 ** 31 - 1;
/**
 * The most whole units a money column holds: `numeric(18, 9)` (nano-USD) and `numeric(18, 6)` (microcredits)
 * both keep 18 digits, so 10^18 units, whatever the scale.
 */
const MAX_WHOLE_UNITS = 10n ** 18n;

export type DecodedUsageEvent = { row: GenerationRow } | { problem: string };

/**
 * Bytes from the bus to a `usage_generations` row, or the reason the ledger can never apply them: bytes that
 * are not a UsageEvent, or an event without the request id, account or timestamp the contract requires, or
 * with amounts the ledger's columns cannot hold. Retrying such a message cannot help, so it is not retried.
 * Strings are made storable here too (the edge's writer already does), so text PostgreSQL refuses cannot
 * arrive from any producer. An event from before event ids is keyed by its request id, as it was then.
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
  const money = moneyOf(event);
  if ('problem' in money) return money;
  return { row: toGenerationRow(event, ts, money) };
}

/** A call's amounts in whole units, as the wire carries them; the database makes them decimals, exactly. */
type EventMoney = Pick<GenerationRow, 'totalCostNanoUsd' | 'creditsChargedMicrocredits' | 'fairUseMicrocredits'>;

/**
 * The call's amounts, never through a float: an amount the edge left out (an edge from before whole units, which
 * no longer runs) is 0, and one its column cannot hold is a problem.
 */
function moneyOf(event: UsageEvent): EventMoney | { problem: string } {
  const amounts: Array<[string, bigint | undefined]> = [
    ['list_cost_nano_usd', event.listCostNanoUsd],
    ['credits_charged_microcredits', event.creditsChargedMicrocredits],
    ['fair_use_microcredits', event.fairUseMicrocredits],
  ];
  for (const [field, units] of amounts)
    if (units !== undefined && (units >= MAX_WHOLE_UNITS || units <= -MAX_WHOLE_UNITS))
      return { problem: `${field} out of range: ${units}` };
  return {
    totalCostNanoUsd: event.listCostNanoUsd ?? 0n,
    creditsChargedMicrocredits: event.creditsChargedMicrocredits ?? 0n,
    fairUseMicrocredits: event.fairUseMicrocredits ?? 0n,
  };
}

function toGenerationRow(event: UsageEvent, ts: Date, money: EventMoney): GenerationRow {
  return {
    eventId: storableText(event.eventId || event.requestId),
    requestId: storableText(event.requestId),
    accountId: storableText(event.accountId),
    userId: orNull(event.userId),
    keyId: orNull(event.keyId),
    keyLabel: orNull(event.keyLabel),
    orgId: orNull(event.orgId),
    model: storableText(event.model),
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
    ...money,
    cacheDiscountNanoUsd: cacheDiscountNanoUsdOf(event),
    isByok: event.isByok,
    status: event.status,
    latencyMs: toInt4(event.latencyMs),
    // The edge sends 0 when no token was produced: stored as unknown, so averages count only real first tokens.
    ttftMs: event.ttftMs === 0n ? null : toInt4(event.ttftMs),
    stream: event.stream,
    sessionId: orNull(event.sessionId),
    ...routingOutcome(event),
    cacheHit: event.cacheHit,
    guardrailId: orNull(event.guardrailId),
    guardrailAction: orNull(event.guardrailAction),
    ts,
  };
}

/**
 * The target that served the call and the attempts it took. An edge from before routing policy leaves
 * `served_by` empty (one that has it always names the target it tried, even on failure): its call had one
 * target, the one `upstream` names, tried once if the call reached it, and only an edge that dialed an engine
 * names the provider. An event without `served_by` whose call never reached an upstream reads the same from
 * either edge (0 attempts); its `upstream` is still the target the route named.
 */
function routingOutcome(event: UsageEvent): { servedBy: string | null; attempts: number } {
  if (event.servedBy) return { servedBy: orNull(event.servedBy), attempts: Math.max(0, event.attempts) };
  return { servedBy: orNull(event.upstream), attempts: event.provider ? 1 : 0 };
}

/**
 * What the call's cache reads saved against uncached input at list price, priced from the catalog the edge
 * prices with (the model as called, else the model sent upstream); 0 for a model the catalog does not price.
 */
function cacheDiscountNanoUsdOf(event: UsageEvent): bigint {
  const price = (findCatalogModel(event.model) ?? findCatalogModel(event.upstreamModel))?.price;
  return price ? BigInt(cacheDiscountNanoUsd(price, Number(event.cacheReadTokens))) : 0n;
}

/** proto3 strings are '' when unset. */
function orNull(value: string | undefined): string | null {
  const storable = value ? storableText(value) : '';
  return storable ? storable : null;
}

/** A duration the column cannot hold is recorded as unknown rather than holding up the call's charge. */
function toInt4(value: bigint): number | null {
  return value >= 0n && value <= BigInt(MAX_INT4) ? Number(value) : null;
}

export interface UsageConsumerDeps {
  db: PrismaClient;
  logger: Logger;
  /** Most events applied in one transaction. */
  batchSize: number;
  /** How long a short batch may wait for more events. */
  batchLingerMs?: number;
  /** Called after a batch committed, with the accounts it was the first sight of (to publish their balance). */
  onNewAccounts?: (accountIds: string[]) => Promise<void>;
  /** Called after a batch committed: events in it, rows new to the ledger, and when its oldest event happened. */
  onApplied?: (batch: { events: number; inserted: number; oldestAt: Date | undefined }) => void;
  /** Called once an event is parked in usage_dead_letters: `undecodable`, or `refused` by the database. */
  onDeadLetter?: (reason: 'undecodable' | 'refused') => void;
  /** The consumer group; default USAGE_LEDGER_GROUP_ID. */
  groupId?: string;
  /** A lone event failing with an unknown error is parked after this many attempts; absent, retried for ever. */
  parkLoneAfterAttempts?: number;
  /** The server cancels a batch's statement that runs longer (LEDGER_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs?: number;
}

/** A usage event the ledger can never apply, with the decoder's reason. */
class UndecodableUsageEventError extends Error {
  constructor(readonly problem: string) {
    super(`usage event cannot be applied: ${problem}`);
    this.name = 'UndecodableUsageEventError';
  }
}

/**
 * Applies a batch of usage events in one transaction. It resolves only once the rows are committed (or were
 * already there), and the bus commits the offsets only after that, so a crash in between means a
 * redelivery, which the idempotent insert absorbs. A database error rejects, and the bus's poison handling
 * (libs/bus settleBatch) takes over: it retries an outage with backoff, and applies a refused batch one event
 * at a time to park the event the database refuses. A message that does not decode is named as rejected,
 * so the bus parks it without holding up its batch.
 */
function createUsageBatchHandler(deps: UsageConsumerDeps): BatchHandler {
  return async (messages: IncomingMessage[]): Promise<BatchOutcome> => {
    const rows: GenerationRow[] = [];
    const rejected: BatchOutcome['rejected'] = [];
    for (const message of messages) {
      const decoded = decodeUsageEvent(message.value);
      if ('problem' in decoded) rejected.push({ message, error: new UndecodableUsageEventError(decoded.problem) });
      else rows.push(decoded.row);
    }
    const applied = await applyGenerations(deps.db, rows, new Date(), deps.statementTimeoutMs);
    deps.onApplied?.({
      events: rows.length,
      inserted: applied.inserted,
      oldestAt: rows.reduce<Date | undefined>(
        (oldest, row) => (!oldest || new Date(row.ts) < oldest ? new Date(row.ts) : oldest),
        undefined,
      ),
    });
    deps.logger.debug(
      { events: messages.length, inserted: applied.inserted, lastOffset: messages.at(-1)?.offset },
      'usage events applied',
    );
    if (applied.newAccounts.length > 0) await deps.onNewAccounts?.(applied.newAccounts);
    return { rejected };
  };
}

/**
 * Parks a usage event in usage_dead_letters with its error and raw bytes (the bus logs it once at error
 * level). The event id is kept when the bytes decode far enough to carry one, so a redelivery parks once.
 */
function createUsageDeadLetterSink(deps: Pick<UsageConsumerDeps, 'db' | 'onDeadLetter'>): DeadLetterSink {
  return async (message, error) => {
    await recordDeadLetter(deps.db, {
      eventId: eventIdOf(message.value),
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
      key: storableText(message.key),
      error: storableText(describeFailure(error)),
      event: message.value,
    });
    deps.onDeadLetter?.(error instanceof UndecodableUsageEventError ? 'undecodable' : 'refused');
  };
}

/** The id the ledger keys an event by, if the bytes are a UsageEvent that has one. */
function eventIdOf(bytes: Uint8Array): string | null {
  try {
    const event = fromBinary(UsageEventSchema, bytes);
    return storableText(event.eventId || event.requestId) || null;
  } catch {
    return null;
  }
}

/**
 * Consumes `usage.events.v1` as the ledger's group, in batches, from the oldest retained event when the group is new.
 */
export function subscribeUsageEvents(consumer: EventConsumer, deps: UsageConsumerDeps): Promise<Subscription> {
  return consumer.subscribeBatches({
    topic: USAGE_EVENTS_TOPIC,
    groupId: deps.groupId ?? USAGE_LEDGER_GROUP_ID,
    fromBeginning: true,
    maxBatchSize: deps.batchSize,
    lingerMs: deps.batchLingerMs,
    handler: createUsageBatchHandler(deps),
    poison: {
      deadLetter: createUsageDeadLetterSink(deps),
      classify: classifyLedgerFailure,
      parkLoneAfterAttempts: deps.parkLoneAfterAttempts,
    },
  });
}

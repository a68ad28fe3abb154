import type { Logger } from '@sbc/logging';
import type { BatchHandler, BatchOutcome, FailureKind, IncomingMessage, PoisonOptions } from './types';

const unknownKind = (): FailureKind => 'unknown';

/** Where one attempt at a batch stands among its retries, and how it keeps its group membership alive. */
export interface SettleAttempt {
  /** 1 for the first attempt at this batch. */
  number?: number;
  /**
   * Called after each message of the one-by-one pass: up to a batch of statements run there, and a member
   * that stays silent past the session timeout is evicted, which starts a rebalance.
   */
  heartbeat?: () => Promise<void>;
}

/**
 * One attempt at a batch, shared by both buses. Resolves once every message is settled: applied by the
 * handler, or parked through `poison.deadLetter`. Rejects when the batch must be retried whole, with backoff:
 * without poison options on any failure, and with them on an outage (a `transient` error, or every message of
 * the batch failing). Retrying re-applies messages already applied here, which at-least-once handlers absorb.
 */
export async function settleBatch(
  messages: IncomingMessage[],
  handler: BatchHandler,
  poison: PoisonOptions | undefined,
  logger: Logger | undefined,
  attempt: SettleAttempt = {},
): Promise<void> {
  if (!poison) {
    reportUnparked(await handler(messages), logger);
    return;
  }
  const classify = poison.classify ?? unknownKind;
  let failure: unknown;
  try {
    await park(await handler(messages), poison, logger);
    return;
  } catch (error) {
    failure = error;
  }
  const kind = classify(failure);
  if (kind === 'transient') throw failure;
  if (messages.length === 1) {
    // Alone, only the error's kind tells poison from outage; an unknown one waits for neighbours to compare,
    // up to parkLoneAfterAttempts: a message that fails alone that often is not waiting for an outage to end.
    const givenUp =
      kind === 'unknown' &&
      poison.parkLoneAfterAttempts !== undefined &&
      (attempt.number ?? 1) >= poison.parkLoneAfterAttempts;
    if (kind !== 'data' && !givenUp) throw failure;
    await park({ rejected: [{ message: messages[0]!, error: failure }] }, poison, logger);
    return;
  }
  // One by one, to find the messages that fail while their neighbours succeed.
  let succeeded = 0;
  const failed: { message: IncomingMessage; error: unknown; kind: FailureKind }[] = [];
  for (const message of messages) {
    try {
      await park(await handler([message]), poison, logger);
      succeeded++;
    } catch (error) {
      const each = classify(error);
      if (each === 'transient') throw error; // the surroundings failed mid-pass: retry, park nothing
      failed.push({ message, error, kind: each });
    }
    await attempt.heartbeat?.();
  }
  // Nothing got through and not every failure names its data: more likely an outage than a batch of poison.
  if (succeeded === 0 && failed.some((f) => f.kind !== 'data')) throw failed[0]!.error;
  await park({ rejected: failed }, poison, logger);
}

/** Hands each rejected message to the dead-letter sink, logging it once at error level. */
async function park(outcome: void | BatchOutcome, poison: PoisonOptions, logger: Logger | undefined): Promise<void> {
  for (const { message, error } of outcome?.rejected ?? []) {
    await poison.deadLetter(message, error);
    logger?.error(
      { err: error, topic: message.topic, partition: message.partition, offset: message.offset, key: message.key },
      'event handler failed on a message for good; parked as a dead letter',
    );
  }
}

/** A subscriber without a dead-letter sink: what its handler rejected is acked, and said once at error level. */
function reportUnparked(outcome: void | BatchOutcome, logger: Logger | undefined): void {
  for (const { message, error } of outcome?.rejected ?? []) {
    logger?.error(
      { err: error, topic: message.topic, partition: message.partition, offset: message.offset, key: message.key },
      'event handler rejected a message; skipped (no dead-letter sink)',
    );
  }
}

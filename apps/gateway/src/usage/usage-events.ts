import { BusBufferFullError, type EventProducer } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import type { Logger } from '@sbc/logging';
import { usageEventIdOf } from './line-event-id';
import { encodeUsageEvent, type UsageFields } from './usage-event-wire';

export type { UsageFields } from './usage-event-wire';

/** The longest a reply's end waits for its usage event to become durable before it is sent anyway. */
export const USAGE_DURABLE_WAIT_MS = 2_000;

const DONE = Promise.resolve();

/**
 * One usage event per model call, with an event id of its own (the ledger's key: a caller's request id may
 * repeat, an event id never does), or for a batch line's answered call its line's id (line-event-id.ts). `emit`
 * queues it and resolves once it is durable: acked by Kafka, or in the embedded bus's outbox. The model path
 * awaits that before the last bytes of a reply (see handle-call), so a crash never leaves a call the caller saw
 * complete unbilled; calls ending together share one ack.
 *
 * A full buffer drops the event (counted and logged) rather than holding a reply, and a durable wait is cut
 * at USAGE_DURABLE_WAIT_MS (the event stays queued). Without a producer (an edge started alone with no
 * KAFKA_BROKERS, which main.ts warns about at start) there is nowhere to send events, and they are only
 * counted — but still encoded, so such an edge (development, the benchmark) spends per call what a
 * production one does.
 */
export function createUsageEmitter(deps: { producer: EventProducer | undefined; logger: Logger }) {
  let dropped = 0;
  let late = 0;
  const report = (error: unknown, requestId: string) => {
    dropped += 1;
    // Said on the first drop and every thousandth after, so an outage does not also flood the logs.
    if (dropped % 1000 !== 1) return;
    if (error instanceof BusBufferFullError)
      deps.logger.error({ requestId, dropped }, 'usage events dropped: bus buffer full');
    else deps.logger.error({ requestId, dropped, err: error }, 'usage events could not be queued');
  };
  return {
    /** `lineEventId`: the call is a batch line's own (lineEventIdOf), never one the edge makes for it. */
    emit(fields: UsageFields, lineEventId?: string): Promise<void> {
      const value = encodeUsageEvent(fields, usageEventIdOf(lineEventId, fields.status));
      if (!deps.producer) {
        dropped += 1;
        return DONE;
      }
      let durable: Promise<void>;
      try {
        durable = deps.producer.sendDurable(USAGE_EVENTS_TOPIC, { key: fields.accountId, value });
      } catch (error) {
        report(error, fields.requestId);
        return DONE;
      }
      let timer: NodeJS.Timeout | undefined;
      const waitCut = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          late += 1;
          if (late % 1000 === 1)
            deps.logger.warn(
              { requestId: fields.requestId, late },
              `a usage event was not durable within ${USAGE_DURABLE_WAIT_MS} ` +
                `ms; the reply ended without waiting longer`,
            );
          resolve();
        }, USAGE_DURABLE_WAIT_MS);
      });
      return Promise.race([
        durable.then(
          () => clearTimeout(timer),
          (error: unknown) => {
            clearTimeout(timer);
            report(error, fields.requestId);
          },
        ),
        waitCut,
      ]);
    },
    dropped: () => dropped,
  };
}

export type UsageEmitter = ReturnType<typeof createUsageEmitter>;

import { BusBufferFullError, type EventProducer } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { newId } from '@sbc/ids';
import type { Logger } from '@sbc/logging';
import { encodeUsageEvent, type UsageFields } from './usage-event-wire';

export type { UsageFields } from './usage-event-wire';

/**
 * One usage event per model call, with an event id of its own (the ledger's key: a caller's request id may
 * repeat, an event id never does), handed to the bus without waiting: the producer batches and acks later,
 * and flushes what is pending when the edge stops. A full buffer drops the event (counted and logged)
 * rather than holding a reply. Without a producer (an edge started alone with no KAFKA_BROKERS, which
 * main.ts warns about at start) there is nowhere to send events, and they are only counted — but still
 * encoded, so such an edge (development, the gateway benchmark) spends per call what a production one does.
 */
export function createUsageEmitter(deps: { producer: EventProducer | undefined; logger: Logger }) {
  let dropped = 0;
  return {
    emit(fields: UsageFields): void {
      const value = encodeUsageEvent(fields, newId('evt'));
      if (!deps.producer) {
        dropped += 1;
        return;
      }
      try {
        deps.producer.send(USAGE_EVENTS_TOPIC, { key: fields.accountId, value });
      } catch (error) {
        dropped += 1;
        // Said on the first drop and every thousandth after, so an outage does not also flood the logs.
        if (dropped % 1000 !== 1) return;
        if (error instanceof BusBufferFullError) deps.logger.error({ requestId: fields.requestId, dropped }, 'usage events dropped: bus buffer full');
        else deps.logger.error({ requestId: fields.requestId, dropped, err: error }, 'usage events could not be queued');
      }
    },
    dropped: () => dropped,
  };
}

export type UsageEmitter = ReturnType<typeof createUsageEmitter>;

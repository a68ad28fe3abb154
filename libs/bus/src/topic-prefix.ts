import type { EventConsumer, EventProducer } from './types';

/**
 * Puts every topic the apps name under `prefix` (`staging.` turns `usage.events.v1` into
 * `staging.usage.events.v1`), so several environments can share one cluster. The apps keep naming topics as
 * the contracts spell them; only the broker sees the prefix.
 */
export function prefixTopics(
  prefix: string,
  bus: { producer: EventProducer; consumer: EventConsumer },
): { producer: EventProducer; consumer: EventConsumer } {
  if (!prefix) return bus;
  const { producer, consumer } = bus;
  return {
    producer: {
      send: (topic, message) => producer.send(prefix + topic, message),
      sendDurable: (topic, message) => producer.sendDurable(prefix + topic, message),
      flush: () => producer.flush(),
      stats: () => producer.stats(),
      close: () => producer.close(),
    },
    consumer: {
      subscribe: (options) => consumer.subscribe({ ...options, topic: prefix + options.topic }),
      subscribeBatches: (options) => consumer.subscribeBatches({ ...options, topic: prefix + options.topic }),
      close: () => consumer.close(),
    },
  };
}

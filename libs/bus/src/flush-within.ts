import type { EventProducer } from './types';

/** Waits for the events already sent to be acknowledged, for at most `ms` (a stop must not hang on a dead broker). */
export async function flushWithin(producer: EventProducer, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([producer.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

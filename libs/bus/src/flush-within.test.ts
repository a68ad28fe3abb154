import { flushWithin } from './flush-within';
import type { EventProducer } from './types';

const producerFlushing = (flush: () => Promise<void>) => ({ flush }) as unknown as EventProducer;

describe('flushing a producer within a bound', () => {
  it('returns once the pending events are acknowledged', async () => {
    let acked = false;
    await flushWithin(
      producerFlushing(async () => void (acked = true)),
      5_000,
    );
    expect(acked).toBe(true);
  });

  it('gives up after the bound when the broker never acknowledges', async () => {
    const started = Date.now();
    await flushWithin(
      producerFlushing(() => new Promise(() => undefined)),
      50,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});

import { createLogger } from '@sbc/logging';
import { Writable } from 'node:stream';
import { loadSimConfig } from './config';
import { start, type RunningSim } from './main';
import { openAiClient, startSim } from './test-support';

const user = [{ role: 'user' as const, content: 'a b c' }]; // reply: 6 pieces

describe('pacing (SIM_LATENCY_MS, SIM_TOKENS_PER_SECOND)', () => {
  let sim: RunningSim;
  beforeAll(async () => {
    sim = await startSim({ latencyMs: 150, tokensPerSecond: 50 });
  });
  afterAll(() => sim.stop());

  it('sends the first token after the latency and the rest at the token rate', async () => {
    const startedAt = performance.now();
    const stream = await openAiClient(sim).chat.completions.create({
      model: 'sim-large',
      messages: user,
      stream: true,
    });
    const arrivals: number[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(performance.now() - startedAt);
    expect(arrivals).toHaveLength(6);
    expect(arrivals[0]!).toBeGreaterThanOrEqual(140);
    // Five more tokens at 20 ms each.
    expect(arrivals[5]! - arrivals[0]!).toBeGreaterThanOrEqual(90);
  });

  it('answers a non-streamed call only after the whole reply would have been generated', async () => {
    const startedAt = performance.now();
    await openAiClient(sim).chat.completions.create({ model: 'sim-large', messages: user });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(240);
  });
});

describe('client disconnect', () => {
  it('stops writing at once when the client leaves mid-stream, without waiting for the next token', async () => {
    const lines: { msg?: string; outcome?: string }[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as { msg?: string });
        done();
      },
    });
    const logger = createLogger({ service: 'sim-upstream', level: 'debug', destination });
    // One token per second: the next write is a second away when the client leaves.
    const sim = await start({ ...loadSimConfig({}), port: 0, latencyMs: 0, tokensPerSecond: 1 }, { logger });
    try {
      const controller = new AbortController();
      const response = await fetch(`${sim.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'sim-large',
          stream: true,
          messages: [{ role: 'user', content: 'sim-tokens:100' }],
        }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      const leftAt = performance.now();
      controller.abort();
      while (!lines.some((line) => line.msg === 'stream ended') && performance.now() - leftAt < 2_000) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(lines.find((line) => line.msg === 'stream ended')).toMatchObject({ outcome: 'client_gone' });
      expect(performance.now() - leftAt).toBeLessThan(500);
    } finally {
      await sim.stop();
    }
  });
});

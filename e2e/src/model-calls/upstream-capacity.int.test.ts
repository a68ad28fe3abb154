import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { Agent, request } from 'undici';
import { anthropicFor, OWNER_KEY as KEY, openAiFor, startStack, type HouseSpec, type Stack } from '../support/stack';

/**
 * What one edge carries to one upstream: on the default configuration a thousand streams all start at
 * once (none waits behind a connection cap), and with a small pool and queue the call past both is
 * answered overloaded at once, in the caller's dialect, instead of waiting without a word.
 */
const STREAMS = 1_000;
const CHUNK = { id: 'chatcmpl-held', object: 'chat.completion.chunk', created: 1, model: 'held' };
const FIRST_DELTA = { role: 'assistant', content: 'first' };

/** An OpenAI-dialect upstream whose streams send their first token and then hold until released. */
async function startHoldingUpstream() {
  const held = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ ...CHUNK, choices: [{ index: 0, delta: FIRST_DELTA, finish_reason: null }] })}\n\n`,
      );
      held.add(res);
      res.once('close', () => held.delete(res));
    });
  });
  server.maxConnections = 20_000;
  server.listen(0, '127.0.0.1', 4_096);
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    held: () => held.size,
    releaseAll() {
      for (const res of held) {
        held.delete(res);
        res.write(
          `data: ${JSON.stringify({ ...CHUNK, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
      }
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let stack: Stack;
let upstream: Awaited<ReturnType<typeof startHoldingUpstream>>;
const house = (url: string): HouseSpec => ({
  house: [{ dialect: 'openai', base_url: url, model: 'held' }],
  // The messages caller reaches the same origin (translated), so both dialects share one pool.
  'house-omni': [{ dialect: 'openai', base_url: url, model: 'held' }],
});

beforeAll(async () => {
  upstream = await startHoldingUpstream();
  stack = await startStack({ label: 'upstream_capacity', house: () => house(upstream.url) });
}, 60_000);

afterAll(async () => {
  upstream?.releaseAll();
  await stack?.stop();
  await upstream?.close();
});

it(
  `${STREAMS} concurrent streams to one upstream all receive ` +
    `their first token at once on the default configuration`,
  async () => {
    const callers = new Agent({ connections: null, headersTimeout: 30_000, bodyTimeout: 30_000 });
    let firstBytes = 0;
    const failures: string[] = [];
    const body = JSON.stringify({ model: 'house', stream: true, messages: [{ role: 'user', content: 'hold' }] });
    try {
      const streams = Array.from({ length: STREAMS }, async () => {
        const res = await request(`${stack.edge.url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher: callers,
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body,
        });
        if (res.statusCode !== 200) {
          failures.push(`${res.statusCode} ${await res.body.text()}`);
          return;
        }
        let counted = false;
        for await (const chunk of res.body) {
          if (!counted && String(chunk).includes('first')) {
            counted = true;
            firstBytes += 1;
          }
        }
      });
      const deadline = Date.now() + 30_000;
      while (firstBytes + failures.length < STREAMS && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      // Every stream is open upstream at the same moment: none is waiting for a connection.
      expect(failures).toEqual([]);
      expect(firstBytes).toBe(STREAMS);
      expect(upstream.held()).toBe(STREAMS);
      upstream.releaseAll();
      await Promise.all(streams);
    } finally {
      await callers.close();
    }
  },
  55_000,
);

it(
  'with a small pool and queue, the call past both is answered overloaded at once: 503 for OpenAI callers, 529 ' +
    'overloaded_error for messages',
  async () => {
    const small = await stack.startEdge(house(upstream.url), {
      UPSTREAM_CONNECTIONS_PER_ORIGIN: '2',
      UPSTREAM_QUEUE_LIMIT: '2',
    });
    const openai = openAiFor(small.url);
    const anthropic = anthropicFor(small.url);
    // Two streams hold both connections; two more wait in the queue.
    const running = [0, 1].map(() =>
      openai.chat.completions.create({ model: 'house', stream: true, messages: [{ role: 'user', content: 'hold' }] }),
    );
    const opened = await Promise.all(running);
    const queued = [0, 1].map(() =>
      openai.chat.completions.create({ model: 'house', stream: true, messages: [{ role: 'user', content: 'wait' }] }),
    );
    // The queued calls reach the edge's queue (they are not refused) before the next call arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const startedAt = performance.now();
    const chat = await openai.chat.completions
      .create({ model: 'house', messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(chat).toBeInstanceOf(OpenAI.APIError);
    expect((chat as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((chat as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('1');

    const messages = await anthropic.messages
      .create({ model: 'house-omni', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(messages).toBeInstanceOf(Anthropic.APIError);
    const refusal = messages as InstanceType<typeof Anthropic.APIError>;
    expect(refusal.status).toBe(529);
    expect((refusal.error as { error?: { type?: string } }).error?.type).toBe('overloaded_error');
    expect(refusal.headers?.get('retry-after')).toBe('1');
    expect(performance.now() - startedAt).toBeLessThan(2_000);

    const metrics = await (await fetch(`${small.url}/metrics`)).text();
    expect(metrics).toMatch(/^sbc_upstream_queued_calls\{[^}]*\} 2$/m);
    expect(metrics).toMatch(/^sbc_upstream_overload_refusals_total\{[^}]*\} 2$/m);

    // Letting the running streams end lets the queued calls through.
    upstream.releaseAll();
    for (const stream of opened) for await (const _chunk of stream) void _chunk;
    await new Promise((resolve) => setTimeout(resolve, 100));
    upstream.releaseAll();
    for (const stream of await Promise.all(queued)) {
      upstream.releaseAll();
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('first');
    }
  },
  30_000,
);

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { rejectionOf } from '@sbc/testing';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { startStack, type UsageStack } from '../support/stack';

/**
 * Honest accounting against a hostile caller, through the edge with the official SDKs: strings the ledger
 * could not store are refused at the door (and the ledger keeps billing everyone else), and no mix of
 * concurrency, missing output limits or upstreams that ignore them bills past a cap or a balance.
 *
 * Prices: house is 200 / 800 credits per 1M tokens in / out; gpt-6-astra $10 / $50, i.e. 50 credits per
 * 1,000 output tokens, served here by the simulator as the OpenAI provider engine.
 */
let stack: UsageStack;
let sim: RunningSim;
let runaway: { url: string; server: Server; maxTokensSeen: unknown[] };

/** An OpenAI-compatible engine that ignores any output limit: 2,000 pieces of text, streamed or not. */
async function startRunawayEngine() {
  const maxTokensSeen: unknown[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { stream?: boolean; max_tokens?: number; max_completion_tokens?: number };
      maxTokensSeen.push(body.max_completion_tokens ?? body.max_tokens);
      const pieces = Array.from({ length: 2_000 }, (_, i) => ` word${i}`);
      const usage = { prompt_tokens: 10, completion_tokens: 2_000 * 3, total_tokens: 10 + 2_000 * 3 };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-run',
            object: 'chat.completion',
            created: 1,
            model: 'runaway',
            choices: [{ index: 0, message: { role: 'assistant', content: pieces.join('') }, finish_reason: 'stop' }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ ...RUNAWAY_CHUNK, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }));
      for (const piece of pieces) res.write(chunk({ content: piece }));
      res.write(chunk({}, 'stop'));
      res.write(`data: ${JSON.stringify({ ...RUNAWAY_CHUNK, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server, maxTokensSeen };
}

beforeAll(async () => {
  sim = await startSim(
    loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
  );
  runaway = await startRunawayEngine();
  stack = await startStack({
    label: 'honest_accounting',
    ledger: {},
    edgeEnv: {
      PROVIDER_ENGINES: JSON.stringify({ openai: { dialect: 'openai', base_url: `${sim.url}/v1`, api_key: 'sk-sim' } }),
      HOUSE_ENGINES: JSON.stringify({
        house: [{ dialect: 'openai', base_url: `${sim.url}/v1`, model: 'sim-large' }],
        'house-omni': [{ dialect: 'openai', base_url: runaway.url, model: 'runaway' }],
      }),
      RATE_LIMIT_PER_MINUTE: '100000',
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await sim?.stop();
  runaway?.server.closeAllConnections();
  await new Promise((resolve) => runaway?.server.close(resolve));
});

const openAi = (key: string) => new OpenAI({ apiKey: key, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 });
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: stack.edge.url, maxRetries: 0 });

interface UsageRow {
  request_id: string;
  status: number;
  credits_charged: number;
  native_tokens_completion: number;
}

/** Every usage row of one key, once at least `count` are there. */
async function rowsOf(key: { id: string; secret: string }, count: number, ms = 20_000): Promise<UsageRow[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const rows: UsageRow[] = [];
    let after = '';
    for (;;) {
      const page = await stack.api(
        'GET',
        `/v1/usage/requests?limit=100&key_id=${key.id}${after ? `&after_id=${after}` : ''}`,
        { key: key.secret },
      );
      expect(page.status).toBe(200);
      rows.push(...(page.body.data as UsageRow[]));
      if (!page.body.has_more) break;
      after = page.body.last_id;
    }
    if (rows.length >= count) return rows;
    if (Date.now() > deadline) throw new Error(`${rows.length} of ${count} usage rows after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The chunk an upstream that ignores its output limit wraps each delta in. */
const RUNAWAY_CHUNK = { id: 'chatcmpl-run', object: 'chat.completion.chunk', created: 1, model: 'runaway' };
const billed = (rows: UsageRow[]) => rows.reduce((sum, row) => sum + row.credits_charged, 0);

describe('strings the ledger cannot store', () => {
  it(
    'a NUL in the model id is a 400 invalid_request naming ' +
      'model, and the ledger goes on billing every other account',
    async () => {
      const attacker = await stack.seedKey({ userId: await stack.seedUser(), scopes: ['gateway:invoke'] });
      const poisoned = await rejectionOf(
        openAi(attacker.secret).chat.completions.create({
          model: 'x\u0000y',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      expect(poisoned).toBeInstanceOf(OpenAI.BadRequestError);
      expect(poisoned).toMatchObject({ status: 400, code: 'invalid_request', param: 'model' });

      const victim = await stack.seedKey({ userId: await stack.seedUser(), scopes: ['gateway:invoke', 'usage:read'] });
      const client = openAi(victim.secret);
      for (let i = 0; i < 5; i++)
        await client.chat.completions.create({
          model: 'house',
          max_tokens: 5,
          messages: [{ role: 'user', content: `call ${i}` }],
        });
      const rows = await rowsOf(victim, 5);
      expect(rows.filter((row) => row.status === 200)).toHaveLength(5);
      expect(billed(rows)).toBeGreaterThan(0);
    },
  );

  it(
    'an unpaired surrogate anywhere in a Messages body is a ' +
      '400 invalid_request_error in that dialect, naming its path',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
      const body =
        '{"model":"house","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a\\ud800b"}]}]}';
      const res = await fetch(`${stack.edge.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key.secret, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          issues: [{ path: 'messages.0.content.0.text', code: 'invalid_string' }],
        },
      });
      const viaSdk = await rejectionOf(
        anthropic(key.secret).messages.create({
          model: 'house',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'nul \u0000 here' }],
        }),
      );
      expect(viaSdk).toBeInstanceOf(Anthropic.BadRequestError);
    },
  );

  it(
    'an escape spelled in capitals (\\uDC00, \\uD800) is refused as the lower-case one is, ' +
      'on a model call and a REST route',
    async () => {
      // Bodies without such an escape skip the walk for one; these must still get it.
      const key = await stack.seedKey({ scopes: ['gateway:invoke', 'keys:write'] });
      const call = await fetch(`${stack.edge.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: '{"model":"house","max_tokens":5,"messages":[{"role":"user","content":"a\\uDC00b"}]}',
      });
      expect(call.status).toBe(400);
      expect(await call.json()).toMatchObject({
        error: { code: 'invalid_request', issues: [{ path: 'messages.0.content', code: 'invalid_string' }] },
      });
      const mint = await fetch(`${stack.edge.url}/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: '{"name":"laptop \\uD800"}',
      });
      expect(mint.status).toBe(400);
      expect(await mint.json()).toMatchObject({
        error: 'invalid_request',
        param: 'name',
        issues: [{ path: 'name', code: 'invalid_string' }],
      });
    },
  );

  it('an output limit past any safe integer is a 400 naming the field, in every dialect', async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const chat = await rejectionOf(
      openAi(key.secret).chat.completions.create({
        model: 'house',
        max_tokens: 1e308,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(chat).toMatchObject({ status: 400, param: 'max_tokens' });
    const responses = await rejectionOf(
      openAi(key.secret).responses.create({ model: 'house', max_output_tokens: 2 ** 53, input: 'hi' }),
    );
    expect(responses).toMatchObject({ status: 400, param: 'max_output_tokens' });
    const messages = await rejectionOf(
      anthropic(key.secret).messages.create({
        model: 'house',
        max_tokens: 1.5,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(messages).toMatchObject({ status: 400 });
  });

  it("an output limit past the model's own is a 400 naming the field, as the vendors answer it", async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const chat = await rejectionOf(
      openAi(key.secret).chat.completions.create({
        model: 'gpt-6-astra',
        max_completion_tokens: 128_001,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(chat).toMatchObject({ status: 400, param: 'max_completion_tokens' });
    expect(
      (
        await openAi(key.secret).chat.completions.create({
          model: 'gpt-6-astra',
          max_completion_tokens: 128_000,
          messages: [{ role: 'user', content: 'sim-tokens:2' }],
        })
      ).choices[0]?.message.content,
    ).toBeTruthy();
  });
});

describe('caps and balances under attack', () => {
  it(
    'a 10-credit daily cap hammered by 50 concurrent ' + 'callers without max_tokens is billed at most 10 credits',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke', 'usage:read'], dailyLimitCredits: 10 });
      const client = openAi(key.secret);
      // 20,000 words each, asked of an engine that honours the limit the edge sends (house: 0.8 credits per 1,000).
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          i % 2 === 0
            ? client.chat.completions.create({
                model: 'house',
                messages: [{ role: 'user', content: `sim-tokens:20000 call ${i}` }],
              })
            : (async () => {
                const stream = await client.chat.completions.create({
                  model: 'house',
                  stream: true,
                  messages: [{ role: 'user', content: `sim-tokens:20000 call ${i}` }],
                });
                for await (const chunk of stream) void chunk;
              })(),
        ),
      );
      const served = results.filter((result) => result.status === 'fulfilled').length;
      expect(served).toBeGreaterThanOrEqual(1);
      for (const result of results) {
        if (result.status === 'rejected')
          expect(result.reason).toMatchObject({ status: 402, error: { budget: 'key_daily' } });
      }
      const rows = await rowsOf(key, 50);
      expect(billed(rows)).toBeGreaterThan(5);
      expect(billed(rows)).toBeLessThanOrEqual(10);
    },
    60_000,
  );

  it('a Free pot drained by 20 concurrent long replies without max_tokens is never overdrawn', async () => {
    const userId = await stack.seedUser();
    const key = await stack.seedKey({ userId, scopes: ['gateway:invoke', 'usage:read', 'billing:read'] });
    const client = openAi(key.secret);
    // The ledger's first sight of the account publishes its Free beta pot (10,000 credits) to the edge.
    await client.chat.completions.create({
      model: 'house',
      max_tokens: 1,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const deadline = Date.now() + 10_000;
    while ((await stack.store.get(`credits:available:${userId}`)) === null) {
      if (Date.now() > deadline) throw new Error('the ledger never published the balance');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        client.chat.completions.create({
          model: 'gpt-6-astra',
          messages: [{ role: 'user', content: `sim-tokens:100000 reply ${i}` }],
        }),
      ),
    );
    expect(results.filter((result) => result.status === 'fulfilled').length).toBeGreaterThanOrEqual(1);
    for (const result of results) {
      if (result.status === 'rejected')
        expect(result.reason).toMatchObject({ status: 402, error: { budget: 'account' } });
    }
    const rows = await rowsOf(key, 21);
    expect(billed(rows)).toBeGreaterThan(5_000);
    expect(billed(rows)).toBeLessThanOrEqual(10_000);
    expect(Number(await stack.store.get(`credits:available:${userId}`))).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it(
    'an upstream that ignores the output limit it is sent is stopped at the limit, with a clean end, and billed no ' +
      'more than reserved',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke', 'usage:read'], dailyLimitCredits: 1 });
      const client = openAi(key.secret);
      // A history resent whole: the stream the edge cuts is billed for all of its prompt.
      const messages = [
        { role: 'user' as const, content: `Earlier: ${'a line of what was said before '.repeat(8)}` },
        { role: 'assistant' as const, content: `And the answer: ${'a line of what was answered '.repeat(8)}` },
        { role: 'user' as const, content: 'go on forever' },
      ];
      const stream = await client.chat.completions.create({
        model: 'house-omni',
        max_tokens: 300,
        stream: true,
        stream_options: { include_usage: true },
        messages,
      });
      let text = '';
      let finish: string | null | undefined;
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect(runaway.maxTokensSeen.at(-1)).toBe(300);
      expect(finish).toBe('length');
      expect(usage?.completion_tokens).toBeGreaterThanOrEqual(300);
      expect(text.split(' ').length).toBeLessThan(2_000);
      // The upstream never reported usage; the prompt is the edge's own count, the one count_tokens answers.
      const counted = await anthropic(key.secret).messages.countTokens({ model: 'house-omni', messages });
      expect(counted.input_tokens).toBeGreaterThan(80);
      expect(usage?.prompt_tokens).toBe(counted.input_tokens);

      // Not streamed, the whole runaway reply arrives (6,000 tokens: 4.8 credits at list price), but the charge
      // stops at what the call reserved, inside the 1-credit cap.
      const reply = await client.chat.completions.create({
        model: 'house-omni',
        max_tokens: 600,
        messages: [{ role: 'user', content: 'more' }],
      });
      expect(reply.usage?.completion_tokens).toBe(6_000);
      const rows = await rowsOf(key, 2);
      expect(rows.map((row) => row.status)).toEqual([200, 200]);
      expect(billed(rows)).toBeGreaterThan(0.5);
      expect(billed(rows)).toBeLessThanOrEqual(1);
    },
  );

  it('a chat call without max_tokens is sent upstream with the output limit it was admitted under', async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke'], dailyLimitCredits: 1 });
    await openAi(key.secret).chat.completions.create({
      model: 'house-omni',
      messages: [{ role: 'user', content: 'no limit given' }],
    });
    const sent = runaway.maxTokensSeen.at(-1) as number;
    // 1 credit pays for at most 1,250 output tokens at 800 credits per 1M.
    expect(sent).toBeGreaterThan(1_000);
    expect(sent).toBeLessThanOrEqual(1_250);
  });
});

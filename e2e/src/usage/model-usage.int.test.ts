import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { rejectionOf } from '@sbc/testing';
import { TEXT_PROMPT } from '../support/model-calls.harness';
import { anthropicFor, openAiFor, simHouse, startStack, type PacedParts, type UsageStack } from '../support/stack';
import { requestId } from '../support/usage-events';

/**
 * What a model call leaves behind: one usage row per call in the ledger (fed over the bus the edge and the
 * ledger share), charged at the house list price, and spend held to key caps and the account balance.
 * House rates: 200 credits per 1M input tokens, 800 per 1M output, so 0.2 / 0.8 millicredits per token.
 */
let stack: UsageStack & PacedParts;

beforeAll(async () => {
  stack = await startStack({
    label: 'model_usage',
    house: simHouse,
    paced: { tokensPerSecond: 20 },
    ledger: { sharesStore: false },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

type Row = Awaited<ReturnType<UsageStack['ledger']['database']['prisma']['usageGeneration']['findUnique']>> & object;

const hello = [{ role: 'user' as const, content: TEXT_PROMPT }];
const withId = (id: string) => ({ headers: { 'x-request-id': id } });

async function poll<T>(what: string, ms: number, read: () => Promise<T | undefined>): Promise<T> {
  const startedAt = Date.now();
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() - startedAt > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The ledger's row for a request id, once the event has been applied. */
function rowFor(id: string, ms = 5_000): Promise<Row> {
  return poll(
    `the usage row of ${id}`,
    ms,
    async () =>
      (await stack.ledger.database.prisma.usageGeneration.findFirst({ where: { requestId: id } })) ?? undefined,
  );
}

/** Every row of a key, once there are `count` of them (then a short pause shows no more arrive). */
async function rowsOfKey(keyId: string, count: number, ms = 5_000): Promise<Row[]> {
  const find = () => stack.ledger.database.prisma.usageGeneration.findMany({ where: { keyId } });
  await poll(`${count} usage rows of ${keyId}`, ms, async () => ((await find()).length >= count ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 100));
  return find();
}

const credits = (row: Row) => Number(row.creditsCharged.toString());
/** House list cost in credits for these token counts. */
const listCredits = (input: number, output: number) => (input * 200 + output * 800) / 1_000_000;
/**
 * Millicredits reserved before dispatch when the body's bytes bound its prompt (a token is at least a byte):
 * each byte at the dearest input rate (200) + max_tokens at 800. A call that does not fit that way is admitted
 * on its prompt's counted tokens instead, which never costs more.
 */
const worstMilli = (body: { max_tokens: number }) =>
  Math.ceil((Buffer.byteLength(JSON.stringify(body)) * 200 + body.max_tokens * 800) / 1_000);

interface Seen {
  id: string;
  model: string;
  dialectIn: 'chat' | 'messages' | 'responses';
  dialectOut: 'openai' | 'anthropic';
  stream: boolean;
  input: number;
  output: number;
}

function expectRecorded(row: Row, seen: Seen, keyId: string): void {
  expect(row).toMatchObject({
    requestId: seen.id,
    keyId,
    model: seen.model,
    upstream: 'house',
    dialectIn: seen.dialectIn,
    dialectOut: seen.dialectOut,
    status: 200,
    isByok: false,
    stream: seen.stream,
  });
  expect(row.tokensPrompt).toBe(BigInt(seen.input));
  expect(row.tokensCompletion).toBe(BigInt(seen.output));
  expect(seen.input).toBeGreaterThan(0);
  expect(seen.output).toBeGreaterThan(0);
  const list = listCredits(seen.input, seen.output);
  // The list cost is recorded exactly, and the charge is exactly that cost in credits.
  expect(Number(row.totalCostUsd.toString()) * 1_000).toBeCloseTo(list, 9);
  expect(credits(row)).toBeGreaterThan(0);
  expect(credits(row)).toBeCloseTo(list, 6);
  expect(row.latencyMs).not.toBeNull();
  expect(row.ttftMs).not.toBeNull();
  expect(row.ttftMs!).toBeGreaterThan(0);
  expect(row.ttftMs!).toBeLessThanOrEqual(row.latencyMs!);
}

describe('usage rows', () => {
  it(
    'every call, streamed or not and whatever the dialects, ' + 'leaves exactly one row with the usage the caller saw',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
      const openai = openAiFor(stack.edge.url, key.secret);
      const anthropic = anthropicFor(stack.edge.url, key.secret);
      const seen: Seen[] = [];

      for (const model of ['house', 'house-omni'] as const) {
        const id = requestId('chat');
        const reply = await openai.chat.completions.create({ model, messages: hello, max_tokens: 64 }, withId(id));
        const out = model === 'house' ? 'openai' : 'anthropic';
        seen.push({
          id,
          model,
          dialectIn: 'chat',
          dialectOut: out,
          stream: false,
          input: reply.usage!.prompt_tokens,
          output: reply.usage!.completion_tokens,
        });
      }
      for (const model of ['house-omni', 'house'] as const) {
        const id = requestId('msg');
        const reply = await anthropic.messages.create({ model, messages: hello, max_tokens: 64 }, withId(id));
        const out = model === 'house' ? 'openai' : 'anthropic';
        seen.push({
          id,
          model,
          dialectIn: 'messages',
          dialectOut: out,
          stream: false,
          input: reply.usage.input_tokens,
          output: reply.usage.output_tokens,
        });
      }
      {
        const id = requestId('chatstream');
        const stream = await openai.chat.completions.create(
          {
            model: 'house',
            messages: [{ role: 'user', content: 'sim-tokens:40 stream it' }],
            max_tokens: 64,
            stream: true,
            stream_options: { include_usage: true },
          },
          withId(id),
        );
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
        seen.push({
          id,
          model: 'house',
          dialectIn: 'chat',
          dialectOut: 'openai',
          stream: true,
          input: usage!.prompt_tokens,
          output: usage!.completion_tokens,
        });
      }
      {
        const id = requestId('msgstream');
        const final = await anthropic.messages
          .stream(
            { model: 'house-omni', messages: [{ role: 'user', content: 'sim-tokens:40 stream it' }], max_tokens: 64 },
            withId(id),
          )
          .finalMessage();
        seen.push({
          id,
          model: 'house-omni',
          dialectIn: 'messages',
          dialectOut: 'anthropic',
          stream: true,
          input: final.usage.input_tokens,
          output: final.usage.output_tokens,
        });
      }
      {
        const id = requestId('responses');
        const reply = await openai.responses.create(
          { model: 'house', input: TEXT_PROMPT, max_output_tokens: 64 },
          withId(id),
        );
        seen.push({
          id,
          model: 'house',
          dialectIn: 'responses',
          dialectOut: 'openai',
          stream: false,
          input: reply.usage!.input_tokens,
          output: reply.usage!.output_tokens,
        });
      }

      const rows = await rowsOfKey(key.id, seen.length);
      expect(rows.map((row) => row.requestId).sort()).toEqual(seen.map((call) => call.id).sort());
      for (const call of seen)
        expectRecorded(
          rows.find((row) => row.requestId === call.id)!,
          call,
          key.id,
        );
      // Streamed calls: 40 output tokens, as asked.
      expect(seen.filter((call) => call.stream).map((call) => call.output)).toEqual([40, 40]);
    },
  );

  it(
    'the request id the edge answers with (x-request-id / ' + 'request-id) keys the row when the caller sends none',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
      const chat = await openAiFor(stack.edge.url, key.secret)
        .chat.completions.create({ model: 'house', messages: hello, max_tokens: 16 })
        .withResponse();
      const messages = await anthropicFor(stack.edge.url, key.secret)
        .messages.create({ model: 'house-omni', messages: hello, max_tokens: 16 })
        .withResponse();
      const chatId = chat.response.headers.get('x-request-id')!;
      const messagesId = messages.response.headers.get('request-id')!;
      expect(chatId).toBeTruthy();
      expect(messagesId).toBeTruthy();
      expect((await rowFor(chatId)).tokensCompletion).toBe(BigInt(chat.data.usage!.completion_tokens));
      expect((await rowFor(messagesId)).tokensCompletion).toBe(BigInt(messages.data.usage.output_tokens));
      expect(await rowsOfKey(key.id, 2)).toHaveLength(2);
    },
  );

  it('a refused call (unknown model → 404) is recorded with status 404 and nothing used or charged', async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const id = requestId('unknown');
    const error = await rejectionOf(
      openAiFor(stack.edge.url, key.secret).chat.completions.create(
        { model: 'no-such-model', messages: hello },
        withId(id),
      ),
    );
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    const row = await rowFor(id);
    expect(row).toMatchObject({
      keyId: key.id,
      model: 'no-such-model',
      status: 404,
      dialectIn: 'chat',
      isByok: false,
      tokensPrompt: 0n,
      tokensCompletion: 0n,
    });
    expect(credits(row)).toBe(0);
  });

  it(
    'a caller that hangs up mid-stream is recorded with status 499 and billed for what it received, its whole prompt ' +
      'included',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
      const id = requestId('hangup');
      const controller = new AbortController();
      // A conversation resent whole, as chat clients do: the prompt the stream is billed for is all of it.
      const history = Array.from({ length: 6 }, (_, turn) => ({
        role: turn % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: `Turn ${turn}: ${'a fairly long line of history '.repeat(40)}`,
      }));
      const messages = [...history, { role: 'user' as const, content: 'sim-tokens:400 tell me a long story' }];
      const stream = await openAiFor(stack.pacedEdge.url, key.secret).chat.completions.create(
        { model: 'house', messages, max_tokens: 1000, stream: true },
        { ...withId(id), signal: controller.signal },
      );
      let pieces = 0;
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) pieces += 1;
        if (pieces === 2) controller.abort();
      }
      expect(pieces).toBe(2);
      const row = await rowFor(id);
      expect(row).toMatchObject({ keyId: key.id, model: 'house', status: 499, stream: true, upstream: 'house' });
      // 400 tokens at 20 per second take 20 s; the row came long before (only what was produced is counted).
      expect(row.tokensCompletion).toBeLessThan(400n);
      expect(row.tokensCompletion).toBeGreaterThanOrEqual(2n);
      // The edge's own count of the same turns, by its tokenizer (the house model's engine cannot count them).
      const counted = await anthropicFor(stack.pacedEdge.url, key.secret).messages.countTokens({
        model: 'house',
        messages,
      });
      expect(counted.input_tokens).toBeGreaterThan(1_000);
      expect(row.tokensPrompt).toBe(BigInt(counted.input_tokens));
      expect(credits(row)).toBeGreaterThan(0);
    },
  );
});

/** The store's spend counters hold whole millicredits: each call's exact charge, rounded up. */
function counterMilli(rows: Array<Parameters<typeof credits>[0]>): number {
  return rows.reduce((sum, row) => sum + Math.ceil(credits(row) * 1_000 - 1e-9), 0);
}

/** A call that costs ~240 millicredits (300 output tokens) and reserves ~330 (max_tokens 400). */
const spendBody = {
  model: 'house',
  max_tokens: 400,
  messages: [{ role: 'user' as const, content: 'sim-tokens:300 spend some credits' }],
};
const smallBody = { model: 'house', max_tokens: 16, messages: hello };
const utcDay = () => new Date().toISOString().slice(0, 10).replace(/-/g, '');

describe('key daily cap (1 credit)', () => {
  it(
    'calls that fit succeed; once spent, the next is 402 in the dialect called with budget key_daily and ' +
      'x-should-retry: false',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke'], dailyLimitCredits: 1 });
      const openai = openAiFor(stack.edge.url, key.secret);
      const worst = worstMilli(spendBody);
      expect(worst).toBeGreaterThan(300);
      expect(worst).toBeLessThan(400);

      let spentMilli = 0;
      let succeeded = 0;
      let refusedId: string | undefined;
      for (let i = 0; i < 6 && !refusedId; i++) {
        const id = requestId(`cap${i}`);
        if (spentMilli + worst <= 1_000) {
          const reply = await openai.chat.completions.create(spendBody, withId(id));
          expect(reply.usage!.completion_tokens).toBe(300);
          const row = await rowFor(id);
          expect(row.status).toBe(200);
          spentMilli += Math.round(credits(row) * 1_000);
          succeeded += 1;
        } else {
          const error = await rejectionOf(openai.chat.completions.create(spendBody, withId(id)));
          expect(error).toBeInstanceOf(OpenAI.APIError);
          expect(error.status).toBe(402);
          expect(error).toMatchObject({ code: 'budget_exhausted', type: 'insufficient_quota' });
          expect(error.error).toMatchObject({ budget: 'key_daily', message: expect.any(String) });
          expect(error.headers.get('x-should-retry')).toBe('false');
          refusedId = id;
        }
      }
      expect(succeeded).toBe(3);
      expect(refusedId).toBeDefined();

      // The same refusal in the Messages dialect.
      const messagesId = requestId('capmsg');
      const refused = await rejectionOf(
        anthropicFor(stack.edge.url, key.secret).messages.create(
          { ...spendBody, model: 'house-omni' },
          withId(messagesId),
        ),
      );
      expect(refused).toBeInstanceOf(Anthropic.APIError);
      expect(refused.status).toBe(402);
      expect(refused.error).toMatchObject({
        type: 'error',
        error: { type: 'billing_error', budget: 'key_daily', message: expect.any(String) },
      });
      expect(refused.headers.get('x-should-retry')).toBe('false');

      // Refusals are recorded, with nothing charged.
      for (const id of [refusedId!, messagesId]) {
        const row = await rowFor(id);
        expect(row).toMatchObject({ status: 402, tokensPrompt: 0n, tokensCompletion: 0n });
        expect(credits(row)).toBe(0);
      }

      // A call whose worst case still fits in what is left is served.
      expect(spentMilli + worstMilli(smallBody)).toBeLessThanOrEqual(1_000);
      const smallId = requestId('capsmall');
      await openai.chat.completions.create(smallBody, withId(smallId));
      expect((await rowFor(smallId)).status).toBe(200);

      const rows = await rowsOfKey(key.id, succeeded + 3);
      const total = rows.reduce((sum, row) => sum + credits(row), 0);
      expect(total).toBeLessThanOrEqual(1);
      expect(Number(await stack.store.get(`spend:key:${key.id}:d:${utcDay()}`))).toBe(counterMilli(rows));
    },
  );

  it('parallel calls against a cap that fits only some of them never push recorded spend over the cap', async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke'], dailyLimitCredits: 1 });
    const openai = openAiFor(stack.edge.url, key.secret);
    const n = 10;
    const ids = Array.from({ length: n }, (_, i) => requestId(`par${i}`));
    const results = await Promise.allSettled(ids.map((id) => openai.chat.completions.create(spendBody, withId(id))));
    const ok = results.filter((result) => result.status === 'fulfilled');
    const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    expect(ok.length).toBeGreaterThanOrEqual(1);
    // At most ⌊1000 / worst⌋ reservations fit at once, and three calls' real cost leaves no room for a fourth.
    expect(ok.length).toBeLessThanOrEqual(3);
    for (const error of refused) {
      expect(error.status).toBe(402);
      expect(error.error).toMatchObject({ budget: 'key_daily' });
    }

    const rows = await rowsOfKey(key.id, n);
    expect(rows).toHaveLength(n);
    expect(rows.filter((row) => row.status === 200)).toHaveLength(ok.length);
    expect(rows.filter((row) => row.status === 402)).toHaveLength(refused.length);
    const total = rows.reduce((sum, row) => sum + credits(row), 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(1);
    // Every reservation was settled to its real cost: the key's counter holds exactly what was charged.
    expect(Number(await stack.store.get(`spend:key:${key.id}:d:${utcDay()}`))).toBe(counterMilli(rows));
  });
});

describe('account balance (credits:available)', () => {
  const balanceKey = () => `credits:available:${stack.ownerId}`;
  afterEach(async () => {
    await stack.store.del(balanceKey());
  });

  it(
    'a call that does not fit is 402 budget account; one ' + 'that fits is served and the balance drops by its charge',
    async () => {
      const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
      const openai = openAiFor(stack.edge.url, key.secret);
      await stack.store.set(balanceKey(), '100');
      expect(worstMilli(spendBody)).toBeGreaterThan(100);
      expect(worstMilli(smallBody)).toBeLessThanOrEqual(100);

      const bigId = requestId('acctbig');
      const error = await rejectionOf(openai.chat.completions.create(spendBody, withId(bigId)));
      expect(error.status).toBe(402);
      expect(error).toMatchObject({ code: 'budget_exhausted' });
      expect(error.error).toMatchObject({ budget: 'account' });
      expect(error.headers.get('x-should-retry')).toBe('false');
      const refused = await rejectionOf(
        anthropicFor(stack.edge.url, key.secret).messages.create({ ...spendBody, model: 'house-omni' }),
      );
      expect(refused.status).toBe(402);
      expect(refused.error).toMatchObject({ type: 'error', error: { type: 'billing_error', budget: 'account' } });
      expect((await rowFor(bigId)).status).toBe(402);
      // A refusal leaves the balance as it was.
      expect(await stack.store.get(balanceKey())).toBe('100');

      const smallId = requestId('acctsmall');
      const reply = await openai.chat.completions.create(smallBody, withId(smallId));
      const row = await rowFor(smallId);
      expect(row.status).toBe(200);
      expect(row.tokensCompletion).toBe(BigInt(reply.usage!.completion_tokens));
      const chargedMilli = Math.round(credits(row) * 1_000);
      expect(chargedMilli).toBeGreaterThan(0);
      expect(Number(await stack.store.get(balanceKey()))).toBe(100 - chargedMilli);
    },
  );
});

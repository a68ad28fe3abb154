import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { startStack, type UsageStack } from '../support/stack';

/**
 * Usage equal, streamed or not (issue 50; LiteLLM #37923 logged streamed calls at 0): for every caller dialect on
 * every target dialect, the same call made buffered and streamed, with the official SDKs, is billed the same credits
 * and shows the same tokens (input, output, cache read and write, reasoning) in GET /v1/usage/requests. Targets are
 * catalog models on credits through provider engines pointed at the simulator, which reports cache and reasoning
 * tokens on cue (`sim-usage:`), so every figure compared is non-zero. No engine speaks OpenAI Responses upstream
 * (engines speak chat completions or Messages), so Responses is a caller dialect here, not a target.
 */
let sim: RunningSim;
let stack: UsageStack;
let key: { id: string; secret: string };

/** Catalog models by the dialect of the engine that serves them. */
const TARGETS = { openai: 'gpt-6-astra', anthropic: 'claude-haiku-4-5' } as const;
type TargetDialect = keyof typeof TARGETS;
type CallerDialect = 'chat' | 'responses' | 'messages';

const PROMPT = 'Tell me about usage parity sim-usage:cache_read=300,cache_write=120,reasoning=25';
const SYSTEM = 'Answer in one sentence.';
const MAX_TOKENS = 200;

beforeAll(async () => {
  sim = await startSim(
    loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
  );
  stack = await startStack({
    label: 'usage_parity',
    ledger: {},
    edgeEnv: {
      PROVIDER_ENGINES: JSON.stringify({
        openai: { dialect: 'openai', base_url: `${sim.url}/v1`, api_key: 'sk-sim' },
        anthropic: { dialect: 'anthropic', base_url: sim.url, api_key: 'sk-ant-sim' },
      }),
    },
  });
  key = await stack.seedKey({ scopes: ['gateway:invoke', 'usage:read'] });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await sim?.stop();
});

const openAi = () => new OpenAI({ apiKey: key.secret, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: key.secret, baseURL: stack.edge.url, maxRetries: 0 });

/** What a call gave its caller: the reply's text and the usage object in the caller's dialect. */
interface Answer {
  text: string;
  usage: unknown;
}

/**
 * Makes one call in `caller`'s dialect to `model`, buffered or streamed to its end, under `requestId`. A streamed
 * chat call asks for the usage chunk only with `includeUsage`: without it the caller sees no usage, and the call
 * must still be billed in full.
 */
async function call(
  caller: CallerDialect,
  model: string,
  stream: boolean,
  requestId: string,
  includeUsage = true,
): Promise<Answer> {
  const options = { headers: { 'x-request-id': requestId } };
  let text = '';
  let usage: unknown;
  if (caller === 'chat') {
    const messages = [
      { role: 'system' as const, content: SYSTEM },
      { role: 'user' as const, content: PROMPT },
    ];
    if (!stream) {
      const reply = await openAi().chat.completions.create({ model, messages, max_tokens: MAX_TOKENS }, options);
      return { text: reply.choices[0]!.message.content ?? '', usage: reply.usage };
    }
    const chunks = await openAi().chat.completions.create(
      {
        model,
        messages,
        max_tokens: MAX_TOKENS,
        stream: true,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      },
      options,
    );
    for await (const chunk of chunks) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    return { text, usage };
  }
  if (caller === 'responses') {
    const body = { model, instructions: SYSTEM, input: PROMPT, max_output_tokens: MAX_TOKENS };
    if (!stream) {
      const reply = await openAi().responses.create(body, options);
      return { text: reply.output_text, usage: reply.usage };
    }
    const events = await openAi().responses.create({ ...body, stream: true }, options);
    for await (const event of events) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') usage = event.response.usage;
    }
    return { text, usage };
  }
  const body = {
    model,
    system: SYSTEM,
    max_tokens: MAX_TOKENS,
    messages: [{ role: 'user' as const, content: PROMPT }],
  };
  if (!stream) {
    const reply = await anthropic().messages.create(body, options);
    const whole = reply.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return { text: whole, usage: reply.usage };
  }
  const events = await anthropic().messages.create({ ...body, stream: true }, options);
  // As the SDK's own accumulator: message_start's usage, with message_delta's counts over it.
  let merged: Record<string, unknown> = {};
  for await (const event of events) {
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    if (event.type === 'message_start') merged = { ...event.message.usage };
    if (event.type === 'message_delta')
      for (const [name, value] of Object.entries(event.usage)) if (value != null) merged[name] = value;
  }
  return { text, usage: merged };
}

interface UsageRow {
  request_id: string;
  status: number;
  stream: boolean;
  native_tokens_prompt: number;
  native_tokens_completion: number;
  cache_read: number;
  cache_write: number;
  reasoning_tokens: number;
  total_cost_usd: number;
  cache_discount: number;
  credits_charged: number;
}

/** The usage row of each request id, once all are recorded. */
async function rowsFor(requestIds: string[], ms = 20_000): Promise<Map<string, UsageRow>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const page = await stack.api('GET', `/v1/usage/requests?limit=100&key_id=${key.id}`, { key: key.secret });
    expect(page.status).toBe(200);
    const rows = new Map((page.body.data as UsageRow[]).map((row) => [row.request_id, row]));
    if (requestIds.every((id) => rows.has(id))) return rows;
    if (Date.now() > deadline) throw new Error(`usage rows for ${requestIds.join(', ')} not recorded in ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What a row bills and shows, without what legitimately differs between two calls (ids, times, mode). */
const billing = (row: UsageRow) => ({
  status: row.status,
  native_tokens_prompt: row.native_tokens_prompt,
  native_tokens_completion: row.native_tokens_completion,
  cache_read: row.cache_read,
  cache_write: row.cache_write,
  reasoning_tokens: row.reasoning_tokens,
  total_cost_usd: row.total_cost_usd,
  cache_discount: row.cache_discount,
  credits_charged: row.credits_charged,
});

const PAIRS: Array<[CallerDialect, TargetDialect]> = [
  ['chat', 'openai'],
  ['chat', 'anthropic'],
  ['responses', 'openai'],
  ['responses', 'anthropic'],
  ['messages', 'openai'],
  ['messages', 'anthropic'],
];

describe('usage is the same streamed or not', () => {
  it.each(PAIRS)('%s caller on a %s-dialect target: same tokens, cost and credits', async (caller, target) => {
    const model = TARGETS[target];
    const buffered = `parity-${caller}-${target}-buffered-${Date.now()}`;
    const streamed = `parity-${caller}-${target}-streamed-${Date.now()}`;
    const quiet = `parity-${caller}-${target}-streamed-quiet-${Date.now()}`;
    const wholeAnswer = await call(caller, model, false, buffered);
    const streamedAnswer = await call(caller, model, true, streamed);
    expect(streamedAnswer.text).toBe(wholeAnswer.text);
    // The caller reads the same usage either way, reasoning included in its dialect's field.
    expect(streamedAnswer.usage).toEqual(wholeAnswer.usage);
    expect(JSON.stringify(wholeAnswer.usage)).toMatch(/"(reasoning|thinking)_tokens":25/);
    if (caller === 'chat') await call(caller, model, true, quiet, false);

    const ids = caller === 'chat' ? [buffered, streamed, quiet] : [buffered, streamed];
    const rows = await rowsFor(ids);
    const whole = rows.get(buffered)!;
    for (const id of ids.slice(1)) {
      const stream = rows.get(id)!;
      expect(stream.stream).toBe(true);
      expect({ id, ...billing(stream) }).toEqual({ id, ...billing(whole) });
    }
    expect(whole.stream).toBe(false);
    // Every figure compared is really there: the simulator reported cache and reasoning tokens.
    expect(whole).toMatchObject({ status: 200, cache_read: 300, cache_write: 120, reasoning_tokens: 25 });
    expect(whole.native_tokens_prompt).toBeGreaterThan(420);
    expect(whole.native_tokens_completion).toBeGreaterThan(25);
    expect(whole.credits_charged).toBeGreaterThan(0);
    expect(whole.cache_discount).toBeGreaterThan(0);
  });
});

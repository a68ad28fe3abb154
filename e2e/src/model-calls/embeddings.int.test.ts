import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import OpenAI from 'openai';
import { rejectionOf } from '@sbc/testing';
import { openAiFor, OWNER_KEY, simHouseAndEmbed, startStack, type UsageStack } from '../support/stack';
import { requestId } from '../support/usage-events';

/**
 * `POST /v1/embeddings` through the real edge with the official `openai` SDK: the house embedding model (the
 * simulator behind it), the caller's own OpenAI-compatible endpoint, the refusals, and what a call leaves in
 * the model list, the request log and the ledger. Every reply is checked against OpenAI's own schema of it.
 */
let stack: UsageStack;
beforeAll(async () => {
  stack = await startStack({
    label: 'embeddings',
    house: simHouseAndEmbed,
    ledger: {},
  });
  for (const [slug, dialect, baseUrl] of [
    ['oai', 'openai', `${stack.sim.url}/v1`],
    ['ant', 'anthropic', stack.sim.url],
  ] as const) {
    const saved = await stack.api('POST', '/v1/upstreams', {
      key: OWNER_KEY,
      body: { label: slug, slug, base_url: baseUrl, dialect, api_key: 'sk-endpoint' },
    });
    expect(saved.status).toBe(201);
  }
}, 60_000);
afterAll(() => stack?.stop());

/** OpenAI's CreateEmbeddingResponse, as its OpenAPI document gives it (see the file's `$comment`). */
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('float', true);
const matchesOpenAiSchema = ajv.compile(
  JSON.parse(readFileSync(path.join(__dirname, '../support/openai-embedding-response.schema.json'), 'utf8')),
);

const norm = (vector: readonly number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

/** A base64 vector as OpenAI sends it: little-endian float32s. */
function decodeBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
}

/** One call over raw HTTP, its reply checked against OpenAI's schema (base64 vectors decoded first). */
async function embed(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.edge.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OWNER_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const reply = (await res.json()) as OpenAI.CreateEmbeddingResponse & { error?: unknown };
  if (res.status === 200) {
    const asFloats = {
      ...reply,
      data: reply.data.map((item) => ({
        ...item,
        embedding: typeof item.embedding === 'string' ? decodeBase64(item.embedding) : item.embedding,
      })),
    };
    if (!matchesOpenAiSchema(asFloats)) throw new Error(ajv.errorsText(matchesOpenAiSchema.errors));
  }
  return { res, reply };
}

/** A refusal as the SDK surfaces it: its status, and the error's param and code. */
async function refusalOf(call: Promise<unknown>) {
  const error = await rejectionOf(call);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const { status, param, code, message } = error as InstanceType<typeof OpenAI.APIError>;
  return { status, param, code, message };
}

describe('embeddings with the openai SDK', () => {
  it('the house model answers one unit vector per input, the same for the same text, in float', async () => {
    const answer = await stack.openai.embeddings.create({
      model: 'house-embed',
      input: ['the quick brown fox', 'jumps over', 'the quick brown fox'],
      encoding_format: 'float',
    });
    expect(answer).toMatchObject({ object: 'list', model: 'house-embed' });
    expect(answer.data.map((item) => item.index)).toEqual([0, 1, 2]);
    for (const item of answer.data) {
      expect(item.embedding).toHaveLength(1536);
      expect(norm(item.embedding)).toBeCloseTo(1, 6);
    }
    expect(answer.data[2]!.embedding).toEqual(answer.data[0]!.embedding);
    expect(answer.data[1]!.embedding).not.toEqual(answer.data[0]!.embedding);
    expect(answer.usage.prompt_tokens).toBeGreaterThan(0);
    expect(answer.usage.total_tokens).toBe(answer.usage.prompt_tokens);
  });

  it('in base64 with dimensions: little-endian float32s of the float vector, shortened to unit length', async () => {
    const input = 'shorten this text';
    const floats = await stack.openai.embeddings.create({
      model: 'house-embed',
      input,
      dimensions: 256,
      encoding_format: 'float',
    });
    const base64 = await stack.openai.embeddings.create({
      model: 'house-embed',
      input,
      dimensions: 256,
      encoding_format: 'base64',
    });
    const text = base64.data[0]!.embedding as unknown as string;
    expect(typeof text).toBe('string');
    const decoded = decodeBase64(text);
    expect(decoded).toHaveLength(256);
    expect(norm(decoded)).toBeCloseTo(1, 5);
    decoded.forEach((value, index) => expect(value).toBeCloseTo(floats.data[0]!.embedding[index]!, 6));
  });

  it("by the SDK's default (it asks for base64 and decodes it), gives floats", async () => {
    const answer = await stack.openai.embeddings.create({ model: 'house-embed', input: 'defaults' });
    expect(answer.data[0]!.embedding).toHaveLength(1536);
    expect(norm(answer.data[0]!.embedding)).toBeCloseTo(1, 5);
  });

  it("the caller's OpenAI-compatible endpoint answers too, in float and base64, served by that endpoint", async () => {
    const floats = await embed({ model: 'oai/sim-embed', input: ['from my endpoint'], encoding_format: 'float' });
    expect(floats.res.status).toBe(200);
    expect(floats.res.headers.get('x-sbc-served-by')).toBe('byo:oai');
    expect(floats.reply.model).toBe('oai/sim-embed');
    const base64 = await embed({ model: 'oai/sim-embed', input: ['from my endpoint'], encoding_format: 'base64' });
    expect(base64.res.status).toBe(200);
    const decoded = decodeBase64(base64.reply.data[0]!.embedding as unknown as string);
    decoded.forEach((value, index) => expect(value).toBeCloseTo(floats.reply.data[0]!.embedding[index]!, 6));

    const sdk = await stack.openai.embeddings.create({ model: 'oai/sim-embed', input: 'from my endpoint' });
    expect(sdk.data[0]!.embedding).toHaveLength(1536);
  });

  it('takes tokens and token arrays, each token counted once', async () => {
    const { res, reply } = await embed({
      model: 'house-embed',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
    });
    expect(res.status).toBe(200);
    expect(reply.data).toHaveLength(2);
    expect(reply.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    const single = await embed({ model: 'house-embed', input: [1, 2, 3] });
    expect(single.reply.data[0]!.embedding).toEqual(reply.data[0]!.embedding);
  });

  it('carries the request bucket like every model call', async () => {
    const { res } = await embed({ model: 'house-embed', input: 'bucketed' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('1200');
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeLessThan(1200);
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
  });
});

describe('embeddings refusals', () => {
  const create = (body: Partial<OpenAI.EmbeddingCreateParams>) =>
    stack.openai.embeddings.create({ model: 'house-embed', input: 'text', ...body } as OpenAI.EmbeddingCreateParams);

  it.each([
    ['an empty input', { input: '' }, 'input'],
    ['an empty list', { input: [] }, 'input'],
    ['more than 2,048 inputs', { input: Array.from({ length: 2049 }, () => 'a') }, 'input'],
    ['a token that is not a whole number', { input: [[1, 2.5]] }, 'input.0.1'],
    ['dimensions of 0', { dimensions: 0 }, 'dimensions'],
    ["dimensions past the model's", { dimensions: 4096 }, 'dimensions'],
    ['an unknown encoding', { encoding_format: 'int8' as 'float' }, 'encoding_format'],
    ['a chat model', { model: 'house' }, 'model'],
    ["a catalog chat model on the caller's endpoint", { model: 'oai/gpt-6.1-sol' }, 'model'],
  ])('%s is a 400 naming its field', async (_what, body, param) => {
    expect(await refusalOf(create(body))).toMatchObject({ status: 400, param });
  });

  it('an unknown model is a 404 on model, as on every model route', async () => {
    expect(await refusalOf(create({ model: 'no-such-embedder' }))).toMatchObject({
      status: 404,
      param: 'model',
      code: 'model_not_found',
    });
  });

  it('an Anthropic-dialect endpoint has no embeddings: a clear 400, not a 502', async () => {
    expect(await refusalOf(create({ model: 'ant/sim-embed' }))).toMatchObject({
      status: 400,
      param: 'model',
      message: expect.stringMatching(/Anthropic dialect has no embeddings/),
    });
  });

  it('an embedding model on a chat route is a 400 pointing to /v1/embeddings', async () => {
    const refused = await refusalOf(
      stack.openai.chat.completions.create({ model: 'house-embed', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(refused).toMatchObject({ status: 400, param: 'model', message: expect.stringMatching(/v1\/embeddings/) });
  });

  it('a key whose daily cap cannot pay for the input is refused 402', async () => {
    const capped = await stack.seedKey({ scopes: ['gateway:invoke'], dailyLimitCredits: 1 });
    // 2,048 inputs of 40 words: about 84,000 tokens, 1.7 credits at 20 credits per 1M tokens, past the 1-credit cap.
    const input = Array.from({ length: 2048 }, (_, index) => `${index}${' word'.repeat(40)}`);
    const refused = await refusalOf(
      openAiFor(stack.edge.url, capped.secret).embeddings.create({ model: 'house-embed', input }),
    );
    expect(refused).toMatchObject({ status: 402 });
  });
});

describe('what an embeddings call leaves behind', () => {
  it("GET /v1/models names each model's kind, and an embedding model's dimensions", async () => {
    const listed = await stack.api('GET', '/v1/models', { key: OWNER_KEY });
    const byId = new Map((listed.body.data as Array<Record<string, unknown>>).map((model) => [model.id, model]));
    expect(byId.get('house-embed')).toMatchObject({ kind: 'embedding', dimensions: 1536, owned_by: 'house' });
    expect(byId.get('text-embedding-3-large')).toMatchObject({ kind: 'embedding', dimensions: 3072 });
    expect(byId.get('house')).toMatchObject({ kind: 'chat', object: 'model' });
    expect(byId.get('house')).not.toHaveProperty('dimensions');
  });

  it('one usage row per call: input tokens only, billed at the catalog price, in the request log', async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke', 'usage:read'] });
    const client = openAiFor(stack.edge.url, key.secret);
    const id = requestId('embed');
    const answer = await client.embeddings.create(
      { model: 'house-embed', input: ['count these tokens', 'and these'] },
      { headers: { 'x-request-id': id } },
    );
    const ownId = requestId('embed-own');
    await client.embeddings.create({ model: 'oai/sim-embed', input: 'mine' }, { headers: { 'x-request-id': ownId } });

    const rows = await poll(async () => {
      const page = await stack.api('GET', '/v1/usage/requests?limit=10', { key: key.secret });
      const data = page.body.data as Array<Record<string, unknown>>;
      const ids = new Set(data.map((row) => row.request_id));
      return ids.has(id) && ids.has(ownId) ? data : undefined;
    });
    const house = rows.find((row) => row.request_id === id);
    const tokens = answer.usage.prompt_tokens;
    expect(house).toMatchObject({
      model: 'house-embed',
      dialect: 'embeddings',
      native_tokens_prompt: tokens,
      native_tokens_completion: 0,
      is_byok: false,
      stream: false,
      status: 200,
      served_by: 'house',
    });
    // 20 credits per 1M input tokens; a credit is $0.001.
    expect(house!.credits_charged).toBeCloseTo((tokens * 20) / 1_000_000, 9);
    expect(house!.total_cost_usd).toBeCloseTo((tokens * 20) / 1_000_000_000, 12);
    expect(rows.find((row) => row.request_id === ownId)).toMatchObject({
      model: 'oai/sim-embed',
      dialect: 'embeddings',
      is_byok: true,
      credits_charged: 0,
      served_by: 'byo:oai',
    });

    const ledgerRow = await stack.ledger.database.prisma.usageGeneration.findFirst({ where: { requestId: id } });
    expect(ledgerRow).toMatchObject({ dialectIn: 'embeddings', dialectOut: 'openai', model: 'house-embed' });
  });
});

async function poll<T>(read: () => Promise<T | undefined>, ms = 5_000): Promise<T> {
  const startedAt = Date.now();
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() - startedAt > ms) throw new Error(`nothing after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('embeddings route like every model call', () => {
  it("a vendor's embedding model goes to the service's deployment on credits, billed at its list price", async () => {
    const edge = await stack.startEdge(simHouseAndEmbed(stack.sim.url), {
      PROVIDER_ENGINES: JSON.stringify({
        openai: { dialect: 'openai', base_url: `${stack.sim.url}/v1`, api_key: 'sk-sim', label: 'sim' },
      }),
    });
    const key = await stack.seedKey({ scopes: ['gateway:invoke', 'usage:read'] });
    const id = requestId('embed-credits');
    const { data: answer, response } = await openAiFor(edge.url, key.secret)
      .embeddings.create(
        { model: 'text-embedding-3-large', input: 'on credits', dimensions: 1024, encoding_format: 'float' },
        { headers: { 'x-request-id': id } },
      )
      .withResponse();
    expect(response.headers.get('x-sbc-served-by')).toBe('provider:openai/sim');
    expect(answer.data[0]!.embedding).toHaveLength(1024);
    const row = await poll(async () => {
      const page = await stack.api('GET', '/v1/usage/requests?limit=10', { key: key.secret });
      return (page.body.data as Array<Record<string, unknown>>).find((item) => item.request_id === id);
    });
    // $0.13 per 1M input tokens, at $0.001 a credit.
    expect(row).toMatchObject({ model: 'text-embedding-3-large', is_byok: false, native_tokens_prompt: 3 });
    expect(row.total_cost_usd).toBeCloseTo((3 * 0.13) / 1_000_000, 12);
    expect(row.credits_charged).toBeCloseTo((3 * 0.13) / 1_000, 9);
  });

  it('a failing target falls back to the next of `models`; the reply names the model that answered', async () => {
    const saved = await stack.api('POST', '/v1/upstreams', {
      key: OWNER_KEY,
      body: { label: 'flaky', slug: 'flaky', base_url: `${stack.sim.url}/v1`, dialect: 'openai', api_key: 'sk-x' },
    });
    expect(saved.status).toBe(201);
    const { res, reply } = await embed({ model: 'flaky/sim-error-503', models: ['house-embed'], input: 'fall back' });
    expect(res.status).toBe(200);
    expect(reply.model).toBe('house-embed');
    expect(res.headers.get('x-sbc-served-by')).toBe('house');
    expect(Number(res.headers.get('x-sbc-attempts'))).toBeGreaterThanOrEqual(2);
  });
});

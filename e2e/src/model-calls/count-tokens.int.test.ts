import { request } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { freePort } from '@sbc/testing';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { OWNER_KEY, startStack, type Stack } from '../support/stack';

/**
 * What Claude Code asks of a gateway besides its calls (issue 50): `HEAD /` first, then `count_tokens?beta=true` to
 * decide when to compact, and the input tokens of `message_start`, through the edge with the official SDK. Counts
 * come from the target's own count route when the model is served in Anthropic's dialect (its betas shaped as a
 * call's are), else from the tokenizer, and `x-sbc-count-source` says which.
 */
let sim: RunningSim;
let proxy: RecordingProxy;
let stack: Stack;

const CLAUDE_CODE_BETAS = ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'effort-2025-11-24'];
const messages = [{ role: 'user' as const, content: 'How many tokens is this prompt, roughly speaking?' }];
const system = 'You are a careful assistant.';

beforeAll(async () => {
  sim = await startSim(
    loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
  );
  proxy = await startRecordingProxy(sim.url);
  stack = await startStack({
    label: 'count_tokens',
    edgeEnv: {
      HOUSE_ENGINES: JSON.stringify({
        house: [{ dialect: 'openai', base_url: `${proxy.url}/v1`, model: 'sim-large' }],
        'house-omni': [{ dialect: 'anthropic', base_url: proxy.url, model: 'sim-large' }],
        'house-fast': [{ dialect: 'anthropic', base_url: `${proxy.url}/vertex`, model: 'sim-large' }],
      }),
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
  await sim?.stop();
});

const anthropic = () => new Anthropic({ apiKey: OWNER_KEY, baseURL: stack.edge.url, maxRetries: 0 });
/** What the simulator itself counts for the same body (it is the target's own count). */
const simCount = async () =>
  (
    await new Anthropic({ apiKey: 'sk-sim', baseURL: sim.url, maxRetries: 0 }).messages.countTokens({
      model: 'sim-large',
      system,
      messages,
    })
  ).input_tokens;

describe('HEAD /', () => {
  it('answers 200 with no body and no credential, whatever the client accepts', async () => {
    for (const accept of ['*/*', 'application/json', 'text/html']) {
      const answer = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
        const url = new URL(stack.edge.url);
        const req = request({ host: url.hostname, port: url.port, method: 'HEAD', path: '/', headers: { accept } });
        req.on('response', (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        });
        req.on('error', reject);
        req.end();
      });
      expect({ accept, ...answer }).toEqual({ accept, status: 200, bytes: 0 });
    }
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it("asks an Anthropic-dialect target's own count, and says so", async () => {
    const { data, response } = await anthropic()
      .beta.messages.countTokens({ model: 'house-omni', system, messages })
      .withResponse();
    expect(response.headers.get('x-sbc-count-source')).toBe('upstream');
    expect(response.headers.get('x-sbc-served-by')).toBe('house');
    expect(data.input_tokens).toBe(await simCount());
    expect(proxy.posts('/v1/messages/count_tokens').at(-1)!.url).toBe('/v1/messages/count_tokens');
  });

  it('counts with the tokenizer when the model is served in the OpenAI dialect, and says so', async () => {
    const before = proxy.posts().length;
    const { data, response } = await anthropic()
      .messages.countTokens({ model: 'house', system, messages })
      .withResponse();
    expect(response.headers.get('x-sbc-count-source')).toBe('tokenizer');
    expect(response.headers.get('x-sbc-served-by')).toBeNull();
    expect(data.input_tokens).toBeGreaterThan(10);
    expect(proxy.posts().length).toBe(before);
  });

  it('counts with the tokenizer when the Anthropic target cannot count (down)', async () => {
    const created = await stack.api('POST', '/v1/upstreams', {
      key: OWNER_KEY,
      body: {
        label: 'Down',
        base_url: `http://127.0.0.1:${await freePort()}`,
        dialect: 'anthropic',
        api_key: 'sk-x',
        models: ['claude-x'],
      },
    });
    expect(created.status).toBe(201);
    const { data, response } = await anthropic()
      .messages.countTokens({ model: 'down/claude-x', system, messages })
      .withResponse();
    expect(response.headers.get('x-sbc-count-source')).toBe('tokenizer');
    expect(data.input_tokens).toBeGreaterThan(10);
  });

  it("sends the caller's betas to the count route as to a call: a refusal is re-sent, then remembered", async () => {
    const first = await anthropic()
      .beta.messages.countTokens({ model: 'house-fast', system, messages, betas: CLAUDE_CODE_BETAS })
      .withResponse();
    expect(first.response.headers.get('x-sbc-count-source')).toBe('upstream');
    expect(first.data.input_tokens).toBe(await simCount());
    const second = await anthropic().beta.messages.countTokens({
      model: 'house-fast',
      system,
      messages,
      betas: CLAUDE_CODE_BETAS,
    });
    expect(second.input_tokens).toBe(first.data.input_tokens);
    const sent = proxy.posts('/vertex/v1/messages/count_tokens');
    // The SDK adds the count route's own beta, which this endpoint refuses too.
    expect(sent.map((item) => [item.headers['anthropic-beta'], item.status])).toEqual([
      [[...CLAUDE_CODE_BETAS, 'token-counting-2024-11-01'].join(','), 400],
      ['interleaved-thinking-2025-05-14,effort-2025-11-24', 200],
      ['interleaved-thinking-2025-05-14,effort-2025-11-24', 200],
    ]);
  });

  it('needs a credential', async () => {
    const refused = await new Anthropic({ apiKey: 'sk-nobody', baseURL: stack.edge.url, maxRetries: 0 }).messages
      .countTokens({ model: 'house-omni', messages })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
  });
});

describe('message_start', () => {
  const prompt = 'Count me in sim-usage:cache_read=30,cache_write=10';
  const startOf = async (model: string) => {
    const stream = await anthropic().messages.create({
      model,
      max_tokens: 50,
      system,
      stream: true,
      messages: [{ role: 'user', content: prompt }],
    });
    let start: Anthropic.Messages.Usage | undefined;
    let end: Anthropic.Messages.MessageDeltaUsage | undefined;
    for await (const event of stream) {
      if (event.type === 'message_start') start = event.message.usage;
      if (event.type === 'message_delta') end = event.usage;
    }
    return { start: start!, end: end! };
  };

  it("carries the target's own input and cache counts when the target gives them there (Anthropic)", async () => {
    const direct = await new Anthropic({ apiKey: 'sk-sim', baseURL: sim.url, maxRetries: 0 }).messages.create({
      model: 'sim-large',
      max_tokens: 50,
      system,
      messages: [{ role: 'user', content: prompt }],
    });
    const { start } = await startOf('house-omni');
    expect(start).toMatchObject({
      input_tokens: direct.usage.input_tokens,
      cache_read_input_tokens: 30,
      cache_creation_input_tokens: 10,
    });
  });

  it('carries no made-up count when the target reports input only at the end (OpenAI): the end has it', async () => {
    const { start, end } = await startOf('house');
    expect(start).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    expect(end).toMatchObject({ cache_read_input_tokens: 30, cache_creation_input_tokens: 10 });
    expect(end.input_tokens).toBeGreaterThan(0);
  });
});

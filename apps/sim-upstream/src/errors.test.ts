import Anthropic, { type APIError as AnthropicApiError } from '@anthropic-ai/sdk';
import OpenAI, { type APIError as OpenAiApiError } from 'openai';
import type { RunningSim } from './main';
import { anthropicClient, openAiClient, startSim } from './test-support';

let sim: RunningSim;
beforeAll(async () => {
  sim = await startSim({ slowMs: 10_000 });
});
afterAll(() => sim.stop());

const user = [{ role: 'user' as const, content: 'hi' }];

describe('failure hooks (model sim-error-<status>)', () => {
  it('surfaces as the OpenAI SDK typed error for each status, in the OpenAI error shape', async () => {
    const client = openAiClient(sim);
    const cases: [string, abstract new (...args: never[]) => OpenAiApiError][] = [
      ['sim-error-500', OpenAI.InternalServerError],
      ['sim-error-429', OpenAI.RateLimitError],
      ['sim-error-404', OpenAI.NotFoundError],
    ];
    for (const [model, type] of cases) {
      const failure = await client.chat.completions.create({ model, messages: user }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(type);
    }
    const limited = (await client.responses
      .create({ model: 'sim-error-429', input: 'hi' })
      .catch((e: unknown) => e)) as OpenAiApiError;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('1');
    expect(limited.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded', param: null });
    expect(limited.message).toContain('Simulated failure');
  });

  it('surfaces as the Anthropic SDK typed error for each status, in the Anthropic error shape', async () => {
    const client = anthropicClient(sim);
    const overloaded = (await client.messages
      .create({ model: 'sim-error-529', max_tokens: 10, messages: user })
      .catch((e: unknown) => e)) as AnthropicApiError;
    expect(overloaded).toBeInstanceOf(Anthropic.OverloadedError);
    expect(overloaded.status).toBe(529);
    expect(overloaded.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    const limited = await client.messages
      .create({ model: 'sim-error-429', max_tokens: 10, messages: user })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    // Streaming calls fail before the stream opens, with the same status.
    const streamed = await client.messages
      .stream({ model: 'sim-error-500', max_tokens: 10, messages: user })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(Anthropic.InternalServerError);
    expect((streamed as AnthropicApiError).error).toMatchObject({ error: { type: 'api_error' } });
  });

  it('holds the first byte of sim-slow long enough for client timeouts to fire', async () => {
    const startedAt = Date.now();
    const headers = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-slow', messages: user }),
      signal: AbortSignal.timeout(300),
    }).catch((e: unknown) => e);
    expect((headers as Error).name).toBe('TimeoutError');
    // The SDKs report their own timeout as a connection error. (Under Jest's separate realm the abort loses its
    // name, so the SDK picks the base class rather than APIConnectionTimeoutError.)
    const openAiTimedOut = await openAiClient(sim, { timeout: 300 })
      .chat.completions.create({ model: 'sim-slow', messages: user })
      .catch((e: unknown) => e);
    expect(openAiTimedOut).toBeInstanceOf(OpenAI.APIConnectionError);
    const anthropicTimedOut = await anthropicClient(sim, { timeout: 300 })
      .messages.create({ model: 'sim-slow', max_tokens: 5, messages: user })
      .catch((e: unknown) => e);
    expect(anthropicTimedOut).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });
});

describe('request validation', () => {
  it('rejects a chat call without messages as a 400 naming the parameter', async () => {
    const failure = (await openAiClient(sim)
      .chat.completions.create({ model: 'sim-large' } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e)) as OpenAiApiError;
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure.error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
  });

  it('rejects a Messages call without model or max_tokens in the Anthropic error shape', async () => {
    const failure = (await anthropicClient(sim)
      .messages.create({ messages: user } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e)) as AnthropicApiError;
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
    expect(failure.error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'model: Field required' },
    });
  });

  it('answers invalid JSON with a 400 in the dialect of the route', async () => {
    const post = (path: string) =>
      fetch(`${sim.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"model":',
      });
    const chat = await post('/v1/chat/completions');
    expect(chat.status).toBe(400);
    expect(await chat.json()).toMatchObject({ error: { type: 'invalid_request_error', param: null, code: null } });
    const messages = await post('/v1/messages');
    expect(messages.status).toBe(400);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});

describe('API key check (SIM_API_KEY)', () => {
  let locked: RunningSim;
  beforeAll(async () => {
    locked = await startSim({ apiKey: 'sim-secret' });
  });
  afterAll(() => locked.stop());

  it('refuses a wrong key with the vendor-shaped 401 in both SDKs', async () => {
    const openAiFailure = (await openAiClient(locked, { apiKey: 'wrong' })
      .chat.completions.create({ model: 'sim-large', messages: user })
      .catch((e: unknown) => e)) as OpenAiApiError;
    expect(openAiFailure).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(openAiFailure.error).toMatchObject({ code: 'invalid_api_key' });
    const anthropicFailure = (await anthropicClient(locked, { apiKey: 'wrong' })
      .messages.create({ model: 'sim-large', max_tokens: 5, messages: user })
      .catch((e: unknown) => e)) as AnthropicApiError;
    expect(anthropicFailure).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(anthropicFailure.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const models = await openAiClient(locked, { apiKey: 'wrong' })
      .models.list()
      .catch((e: unknown) => e);
    expect(models).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('accepts the key as a Bearer token (both SDKs) or as x-api-key', async () => {
    const chat = await openAiClient(locked, { apiKey: 'sim-secret' }).chat.completions.create({
      model: 'sim-large',
      messages: user,
    });
    expect(chat.choices[0]!.message.content).toBe('Simulated reply to: hi');
    const message = await anthropicClient(locked, { apiKey: 'sim-secret' }).messages.create({
      model: 'sim-large',
      max_tokens: 5,
      messages: user,
    });
    expect(message.content).toEqual([expect.objectContaining({ text: 'Simulated reply to: hi' })]);
    const raw = await fetch(`${locked.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sim-secret' },
      body: JSON.stringify({ model: 'sim-large', messages: user }),
    });
    expect(raw.status).toBe(200);
  });

  it('leaves the health probes open', async () => {
    expect((await fetch(`${locked.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${locked.url}/readyz`)).status).toBe(200);
  });
});

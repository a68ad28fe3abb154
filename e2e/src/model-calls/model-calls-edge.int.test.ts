import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { jsonOf, rejectionOf } from '@sbc/testing';
import type { RunningGateway } from '@sbc/app-gateway';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import {
  closedPortUrl,
  rawStream,
  startRelay,
  TEXT_PROMPT,
  TEXT_REPLY,
  within,
  type Relay,
} from '../support/model-calls.harness';
import { anthropicFor, OWNER_KEY as KEY, openAiFor, simHouse, startStack, type Stack } from '../support/stack';

/**
 * What the edge guarantees around a model call, whatever the dialects: refusals and upstream failures in the
 * dialect called, keys and scopes, fallback engines, the model list, headers, and a caller hanging up.
 * The main edge maps `house-fast` to a sim model that always answers 429.
 */
let stack: Stack;
/** `house` and `house-omni` start with an engine that is down; `house-fast` is an Anthropic engine answering 500. */
let fallbackEdge: RunningGateway;
/** `house` goes through `pacedRelay` to a slowly streaming sim; `house-omni` through `slowRelay` to `sim-slow`. */
let hangUpEdge: RunningGateway;
let pacedSim: RunningSim;
let pacedRelay: Relay;
let slowRelay: Relay;

beforeAll(async () => {
  stack = await startStack({ label: 'model_calls_edge', house: simHouse });
  const down = await closedPortUrl();
  fallbackEdge = await stack.startEdge({
    house: [
      { dialect: 'openai', base_url: down, model: 'sim-large', label: 'down' },
      { dialect: 'openai', base_url: stack.sim.url, model: 'sim-large' },
    ],
    'house-omni': [
      { dialect: 'anthropic', base_url: `${down}/v1`, model: 'sim-large', label: 'down' },
      { dialect: 'anthropic', base_url: stack.sim.url, model: 'sim-large' },
    ],
    'house-fast': [{ dialect: 'anthropic', base_url: stack.sim.url, model: 'sim-error-500' }],
  });
  pacedSim = await startSim(
    loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '20', LOG_LEVEL: 'silent' }),
  );
  pacedRelay = await startRelay(pacedSim.url);
  slowRelay = await startRelay(stack.sim.url);
  hangUpEdge = await stack.startEdge(
    {
      house: [{ dialect: 'openai', base_url: pacedRelay.url, model: 'sim-large' }],
      'house-omni': [{ dialect: 'anthropic', base_url: slowRelay.url, model: 'sim-slow' }],
      'house-fast': [{ dialect: 'openai', base_url: stack.sim.url, model: 'sim-small' }],
    },
    { SHUTDOWN_DRAIN_MS: '1000' },
  );
}, 60_000);

afterAll(async () => {
  await pacedRelay?.stop();
  await slowRelay?.stop();
  await stack?.stop();
  await pacedSim?.stop();
});

const hello = [{ role: 'user' as const, content: TEXT_PROMPT }];
/** The chunk a flooding upstream wraps each delta in. */
const FLOOD_CHUNK = { id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'flood' };

describe('errors in the dialect called', () => {
  it('an unknown model is 404 NotFoundError in each dialect (model_not_found / not_found_error)', async () => {
    const chat = await rejectionOf(stack.openai.chat.completions.create({ model: 'no-such-model', messages: hello }));
    expect(chat).toBeInstanceOf(OpenAI.NotFoundError);
    expect(chat).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    const responses = await rejectionOf(stack.openai.responses.create({ model: 'no-such-model', input: TEXT_PROMPT }));
    expect(responses).toBeInstanceOf(OpenAI.NotFoundError);
    const streamed = await rejectionOf(
      stack.openai.chat.completions.create({ model: 'no-such-model', messages: hello, stream: true }),
    );
    expect(streamed).toBeInstanceOf(OpenAI.NotFoundError);
    const messages = await rejectionOf(
      stack.anthropic.messages.create({ model: 'no-such-model', max_tokens: 10, messages: hello }),
    );
    expect(messages).toBeInstanceOf(Anthropic.NotFoundError);
    expect(messages.type).toBe('not_found_error');
    expect(messages.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('an upstream 429 (OpenAI-dialect engine) arrives as 429 in the caller’s dialect', async () => {
    const chat = await rejectionOf(stack.openai.chat.completions.create({ model: 'house-fast', messages: hello }));
    expect(chat).toBeInstanceOf(OpenAI.RateLimitError);
    expect(chat.message).toContain('sim-upstream answers 429');
    const responses = await rejectionOf(stack.openai.responses.create({ model: 'house-fast', input: TEXT_PROMPT }));
    expect(responses).toBeInstanceOf(OpenAI.RateLimitError);
    const messages = await rejectionOf(
      stack.anthropic.messages.create({ model: 'house-fast', max_tokens: 10, messages: hello }),
    );
    expect(messages).toBeInstanceOf(Anthropic.RateLimitError);
    expect(messages.type).toBe('rate_limit_error');
    const streamed = await rejectionOf(
      stack.anthropic.messages.stream({ model: 'house-fast', max_tokens: 10, messages: hello }).finalMessage(),
    );
    expect(streamed).toBeInstanceOf(Anthropic.RateLimitError);
  });

  it('an upstream 500 (Anthropic-dialect engine) arrives as 500 in the caller’s dialect', async () => {
    const chat = await rejectionOf(
      openAiFor(fallbackEdge.url).chat.completions.create({ model: 'house-fast', messages: hello }),
    );
    expect(chat).toBeInstanceOf(OpenAI.InternalServerError);
    expect(chat.status).toBe(500);
    const messages = await rejectionOf(
      anthropicFor(fallbackEdge.url).messages.create({ model: 'house-fast', max_tokens: 10, messages: hello }),
    );
    expect(messages).toBeInstanceOf(Anthropic.InternalServerError);
    expect(messages).toMatchObject({ status: 500, type: 'api_error' });
  });

  it.each([
    ['/v1/chat/completions', { model: 'house', messages: hello }],
    ['/v1/responses', { model: 'house', input: TEXT_PROMPT }],
    ['/v1/messages', { model: 'house-omni', max_tokens: 10, messages: hello }],
  ])('a call without a key is 401 in the dialect of %s', async (path, body) => {
    const res = await fetch(`${stack.edge.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(401);
    const answer = await jsonOf(res);
    expect(answer.request_id).toBe(res.headers.get('x-request-id'));
    if (path === '/v1/messages')
      expect(answer).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error', message: expect.any(String) },
      });
    else expect(answer.error).toMatchObject({ message: expect.any(String), type: expect.any(String) });
  });

  it('an unknown key is AuthenticationError through both SDKs', async () => {
    const stranger = 'sbc_unknown_key_0123456789abcdefgh';
    expect(
      await rejectionOf(
        openAiFor(stack.edge.url, stranger).chat.completions.create({ model: 'house', messages: hello }),
      ),
    ).toBeInstanceOf(OpenAI.AuthenticationError);
    const messages = await rejectionOf(
      anthropicFor(stack.edge.url, stranger).messages.create({ model: 'house', max_tokens: 10, messages: hello }),
    );
    expect(messages).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(messages.type).toBe('authentication_error');
  });

  it.each([
    ['/v1/chat/completions', { model: 'house', messages: hello }],
    ['/v1/responses', { model: 'house', input: TEXT_PROMPT }],
    ['/v1/messages', { model: 'house', max_tokens: 10, messages: hello }],
  ])('a key without gateway:invoke is 403 insufficient_scope in the shared envelope on %s', async (path, body) => {
    const { secret } = await stack.seedKey({ scopes: ['usage:read'] });
    const res = await fetch(`${stack.edge.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(403);
    expect(await jsonOf(res)).toEqual({
      error: 'insufficient_scope',
      message: expect.any(String),
      required_scopes: ['gateway:invoke'],
      doc_url: 'https://gw.test/developers#errors-insufficient_scope',
      request_id: res.headers.get('x-request-id'),
    });
    expect(
      await rejectionOf(openAiFor(stack.edge.url, secret).chat.completions.create({ model: 'house', messages: hello })),
    ).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(
      await rejectionOf(
        anthropicFor(stack.edge.url, secret).messages.create({ model: 'house', max_tokens: 10, messages: hello }),
      ),
    ).toBeInstanceOf(Anthropic.PermissionDeniedError);
  });

  it('a revoked key is refused with 403 on its next call while other keys keep working', async () => {
    const doomed = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const other = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const doomedClient = openAiFor(stack.edge.url, doomed.secret);
    expect(
      (await doomedClient.chat.completions.create({ model: 'house', messages: hello })).choices[0]?.message.content,
    ).toBe(TEXT_REPLY);

    const revoke = await fetch(`${stack.edge.url}/v1/keys/${doomed.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(revoke.status).toBe(200);

    const refused = await rejectionOf(doomedClient.chat.completions.create({ model: 'house', messages: hello }));
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const raw = await fetch(`${stack.edge.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': doomed.secret, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'house-omni', max_tokens: 10, messages: hello }),
    });
    expect(raw.status).toBe(403);
    expect(await jsonOf(raw)).toMatchObject({ error: 'insufficient_scope', required_scopes: ['gateway:invoke'] });
    expect(
      (await openAiFor(stack.edge.url, other.secret).chat.completions.create({ model: 'house', messages: hello }))
        .choices[0]?.message.content,
    ).toBe(TEXT_REPLY);
    expect(
      (await stack.anthropic.messages.create({ model: 'house-omni', max_tokens: 64, messages: hello })).stop_reason,
    ).toBe('end_turn');
  });

  it('a house model whose first engine is down is answered by its next engine, streamed or not', async () => {
    const openai = openAiFor(fallbackEdge.url);
    const anthropic = anthropicFor(fallbackEdge.url);
    expect(
      (await openai.chat.completions.create({ model: 'house', messages: hello })).choices[0]?.message.content,
    ).toBe(TEXT_REPLY);
    expect((await openai.responses.create({ model: 'house-omni', input: TEXT_PROMPT })).output_text).toBe(TEXT_REPLY);
    const streamed = await anthropic.messages
      .stream({ model: 'house-omni', max_tokens: 64, messages: hello })
      .finalMessage();
    expect(streamed.content).toEqual([expect.objectContaining({ type: 'text', text: TEXT_REPLY })]);
    const chatStream = await openai.chat.completions.stream({ model: 'house', messages: hello }).finalChatCompletion();
    expect(chatStream.choices[0]?.message.content).toBe(TEXT_REPLY);
  });
});

describe('GET /v1/models', () => {
  const HOUSE = ['house', 'house-omni', 'house-fast'];

  it('both SDKs list the house models with the OpenAI and the Anthropic fields', async () => {
    const openaiIds: string[] = [];
    for await (const model of stack.openai.models.list()) {
      openaiIds.push(model.id);
      if (HOUSE.includes(model.id))
        expect(model).toMatchObject({ object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
    }
    const items: Anthropic.ModelInfo[] = [];
    for await (const model of stack.anthropic.models.list()) items.push(model);
    expect(items.map((item) => item.id)).toEqual(openaiIds);
    for (const id of HOUSE) {
      const item = items.find((entry) => entry.id === id) as unknown as Record<string, unknown>;
      expect(item).toMatchObject({
        object: 'model',
        created: expect.any(Number),
        owned_by: expect.any(String),
        type: 'model',
        display_name: expect.stringMatching(/\S/),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        available: true,
      });
      expect(Date.parse(item.created_at as string) / 1000).toBe(item.created);
    }
  });
});

describe('headers', () => {
  const call = (path: string, body: Record<string, unknown>) =>
    fetch(`${stack.edge.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it.each([
    ['chat', '/v1/chat/completions', { model: 'house', messages: hello }, 200],
    ['chat stream', '/v1/chat/completions', { model: 'house-omni', messages: hello, stream: true }, 200],
    ['responses', '/v1/responses', { model: 'house-omni', input: TEXT_PROMPT }, 200],
    ['responses stream', '/v1/responses', { model: 'house', input: TEXT_PROMPT, stream: true }, 200],
    ['messages', '/v1/messages', { model: 'house', max_tokens: 64, messages: hello }, 200],
    ['messages stream', '/v1/messages', { model: 'house-omni', max_tokens: 64, messages: hello, stream: true }, 200],
    ['count_tokens', '/v1/messages/count_tokens', { model: 'house', messages: hello }, 200],
    ['an unknown model', '/v1/chat/completions', { model: 'no-such-model', messages: hello }, 404],
    ['an upstream error', '/v1/messages', { model: 'house-fast', max_tokens: 64, messages: hello }, 429],
  ])(
    '%s: the answer carries x-request-id and the rate-limit headers (and request-id on messages routes)',
    async (_label, path, body, status) => {
      const res = await call(path, body);
      await res.text();
      expect(res.status).toBe(status);
      const requestId = res.headers.get('x-request-id');
      expect(requestId).toMatch(/^req_/);
      if (path.startsWith('/v1/messages')) expect(res.headers.get('request-id')).toBe(requestId);
      const limit = Number(res.headers.get('x-ratelimit-limit'));
      const remaining = Number(res.headers.get('x-ratelimit-remaining'));
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(limit).toBeGreaterThan(0);
      expect(remaining).toBeGreaterThanOrEqual(0);
      expect(remaining).toBeLessThan(limit);
      expect(reset).toBeGreaterThanOrEqual(0);
      expect(reset).toBeLessThanOrEqual(60);
    },
  );

  it('a caller’s own request id is kept on a model call', async () => {
    const { res } = await rawStream(
      stack.edge.url,
      '/v1/messages',
      { model: 'house', max_tokens: 64, messages: hello, stream: true },
      { 'x-request-id': 'trace-model-call-1' },
    );
    expect(res.headers.get('x-request-id')).toBe('trace-model-call-1');
    expect(res.headers.get('request-id')).toBe('trace-model-call-1');
  });
});

describe('a caller hanging up', () => {
  it('mid-stream, the edge drops its upstream request at once and stays healthy', async () => {
    const before = pacedRelay.opened();
    const controller = new AbortController();
    const stream = await openAiFor(hangUpEdge.url).chat.completions.create(
      { model: 'house', messages: [{ role: 'user', content: 'sim-tokens:400 tell me a long story' }], stream: true },
      { signal: controller.signal },
    );
    let pieces = 0;
    // The SDK ends the iteration quietly once its own signal aborts.
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) pieces += 1;
      if (pieces === 2) controller.abort();
    }
    expect(pieces).toBe(2);
    expect(pacedRelay.opened()).toBe(before + 1);
    // 400 tokens at 20 per second would keep the upstream busy for 20 s.
    expect(await within(1_000, () => pacedRelay.open() === 0)).toBeGreaterThanOrEqual(0);
    expect((await fetch(`${hangUpEdge.url}/healthz`)).status).toBe(200);
    expect(
      (await openAiFor(hangUpEdge.url).chat.completions.create({ model: 'house-fast', messages: hello })).choices[0]
        ?.message.content,
    ).toBe(TEXT_REPLY);
  });

  it(
    'mid-stream on a translated call (messages caller, OpenAI-dialect engine), the edge drops its upstream request ' +
      'at once',
    async () => {
      const before = pacedRelay.opened();
      const stream = anthropicFor(hangUpEdge.url).messages.stream({
        model: 'house',
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'sim-tokens:400 tell me a long story' }],
      });
      let pieces = 0;
      stream.on('text', () => {
        pieces += 1;
        if (pieces === 2) stream.abort();
      });
      expect(await rejectionOf(stream.finalMessage())).toBeInstanceOf(Anthropic.APIUserAbortError);
      expect(pacedRelay.opened()).toBe(before + 1);
      expect(await within(1_000, () => pacedRelay.open() === 0)).toBeGreaterThanOrEqual(0);
      expect((await fetch(`${hangUpEdge.url}/healthz`)).status).toBe(200);
    },
  );

  it(
    'before the first byte of a slow engine, the edge ' + 'drops its upstream request at once and stays healthy',
    async () => {
      const controller = new AbortController();
      const pending = rejectionOf(
        anthropicFor(hangUpEdge.url).messages.create(
          { model: 'house-omni', max_tokens: 64, messages: hello, stream: true },
          { signal: controller.signal },
        ),
      );
      await slowRelay.requested();
      // The sim holds `sim-slow` for 10 s before its first byte; the caller leaves long before.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(slowRelay.open()).toBe(1);
      controller.abort();
      expect(await pending).toBeInstanceOf(Anthropic.APIUserAbortError);
      expect(await within(1_000, () => slowRelay.open() === 0)).toBeGreaterThanOrEqual(0);
      expect((await fetch(`${hangUpEdge.url}/healthz`)).status).toBe(200);
      const after = await anthropicFor(hangUpEdge.url).messages.create({
        model: 'house-fast',
        max_tokens: 64,
        messages: hello,
      });
      expect(after.content).toEqual([expect.objectContaining({ text: TEXT_REPLY })]);
    },
  );
});

describe('a caller reading slowly', () => {
  const DELTA = 'x'.repeat(64 * 1024);
  const EVENTS = 1_000; // 64 MB of content, far more than the socket buffers between the three parties

  /** An OpenAI-dialect engine that streams EVENTS big deltas as fast as its socket lets it, then usage and [DONE]. */
  async function startFloodEngine() {
    let written = 0;
    let blocked = false;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ object: 'list', data: [{ id: 'flood', object: 'model', created: 1, owned_by: 'test' }] }),
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const sse = (event: object) => `data: ${JSON.stringify(event)}\n\n`;
        const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
          sse({ ...FLOOD_CHUNK, choices: [{ index: 0, delta, finish_reason: null }], ...extra });
        res.write(chunk({ role: 'assistant', content: '' }));
        const pump = () => {
          while (written < EVENTS) {
            written += 1;
            if (!res.write(chunk({ content: DELTA }))) {
              blocked = true;
              res.once('drain', pump);
              return;
            }
          }
          res.write(sse({ ...FLOOD_CHUNK, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
          const usage = { prompt_tokens: 5, completion_tokens: EVENTS, total_tokens: EVENTS + 5 };
          res.write(sse({ ...FLOOD_CHUNK, choices: [], usage }));
          res.end('data: [DONE]\n\n');
        };
        pump();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/v1`,
      written: () => written,
      blocked: () => blocked,
      stop: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  it(
    'holds the upstream back instead of buffering the stream, ' + 'and delivers all of it once the caller reads again',
    async () => {
      const flood = await startFloodEngine();
      const edge = stack.edge;
      // The flood ignores output limits. As the caller's own endpoint (the owner may use loopback) the call is
      // unpriced, so the edge's guard against runaway priced streams stays out of the way of 64 MB.
      const saved = await fetch(`${edge.url}/v1/upstreams`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'Flood', slug: 'flood', base_url: flood.url, api_key: '', dialect: 'openai' }),
      });
      expect(saved.status).toBe(201);
      try {
        const caller = request(`${edge.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        });
        caller.end(JSON.stringify({ model: 'flood/flood', messages: hello, stream: true }));
        const [res] = (await once(caller, 'response')) as [IncomingMessage];
        expect(res.statusCode).toBe(200);
        res.setEncoding('utf8');
        let text = '';
        const [first] = (await once(res, 'data')) as [string];
        text += first;
        res.pause();
        // The caller stopped reading: the engine must end up blocked long before it has written everything.
        // (Socket buffers on the way hold about 10 MB; without backpressure the edge would read on into memory.)
        expect(await within(5_000, () => flood.blocked())).toBeGreaterThanOrEqual(0);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const writtenWhilePaused = flood.written();
        expect(writtenWhilePaused).toBeLessThan(EVENTS / 4);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(flood.written()).toBe(writtenWhilePaused);
        // Reading again lets the rest through: every delta, the usage chunk withheld, and the terminator.
        res.on('data', (chunk: string) => (text += chunk));
        // A stream paused by hand stays paused when a listener is added; it must be resumed by hand too.
        res.resume();
        await once(res, 'end');
        expect(flood.written()).toBe(EVENTS);
        expect(text.split(DELTA).length - 1).toBe(EVENTS);
        expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
        expect(text).not.toContain('"usage"');
      } finally {
        await flood.stop();
      }
    },
    30_000,
  );
});

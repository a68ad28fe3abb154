import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { rejectionOf, testBackends } from '@sbc/testing';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { simHouseOnly, startStack, type UsageStack } from '../support/stack';

/**
 * The routing policy through the edge with the official SDKs (CONTRACTS "Routing policy"): a model's targets
 * (the caller's endpoints, then credits on route `auto`), retries before the first byte, cooldowns, fallback
 * models, billing by the target that served, and the `x-sbc-*` headers that say which one did.
 */
let stack: UsageStack;
/** The service's provider deployment (`openai/sim`), serving catalog models on credits. */
let providerSim: RunningSim;
let key: { id: string; secret: string };
const endpoints: Endpoint[] = [];

type Behaviour =
  | 'ok'
  | 'fail-503'
  | 'slow-503'
  | 'cut-after-first-chunk'
  | 'cut-before-first-chunk-once'
  | 'rate-limited-once'
  | 'rate-limited-30s';

interface Endpoint {
  url: string;
  /** Model calls received (POSTs), however they were answered. */
  calls(): number;
  bodies: Array<Record<string, unknown>>;
  server: Server;
}

const CHUNK = (model: string, content: string) => ({
  id: 'chatcmpl-e2e',
  object: 'chat.completion.chunk',
  created: 1,
  model,
  choices: [{ index: 0, delta: { content }, finish_reason: null }],
});

/** An OpenAI-compatible endpoint that behaves as scripted: the caller's own endpoint in these tests. */
async function startEndpoint(behaviour: Behaviour): Promise<Endpoint> {
  let calls = 0;
  const bodies: Array<Record<string, unknown>> = [];
  const answer = (res: ServerResponse, body: Record<string, unknown>) => {
    const model = String(body.model);
    if (behaviour === 'fail-503' || behaviour === 'slow-503') {
      res.writeHead(503, {
        'content-type': 'application/json',
        ...(behaviour === 'slow-503' ? { 'retry-after': '2' } : {}),
      });
      res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
      return;
    }
    if (behaviour === 'rate-limited-30s' || (behaviour === 'rate-limited-once' && calls === 1)) {
      const retryAfter = behaviour === 'rate-limited-30s' ? '30' : '5';
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error' } }));
      return;
    }
    if (behaviour === 'cut-before-first-chunk-once' && calls === 1) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(CHUNK(model, 'Hello'))}\n\n`);
      if (behaviour === 'cut-after-first-chunk') {
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      }
      res.write(
        `data: ${JSON.stringify({ ...CHUNK(model, ''), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}` +
          '\n\n',
      );
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-e2e',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      }),
    );
  };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [] }));
        return;
      }
      calls++;
      const body = JSON.parse(raw) as Record<string, unknown>;
      bodies.push(body);
      answer(res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls: () => calls,
    bodies,
    server,
  };
  endpoints.push(endpoint);
  return endpoint;
}

/** Saves `endpoint` as one of the owner's endpoints, listing `models`. */
async function saveEndpoint(slug: string, endpoint: Endpoint, models: string[], weight?: number): Promise<void> {
  const saved = await stack.api('POST', '/v1/upstreams', {
    key: key.secret,
    body: { label: slug, slug, base_url: endpoint.url, api_key: '', dialect: 'openai', models, weight },
  });
  expect(saved.status).toBe(201);
}

interface UsageRow {
  request_id: string;
  model: string;
  status: number;
  credits_charged: number;
  is_byok: boolean;
  upstream: string;
  served_by: string;
  attempts: number;
}

/** The usage row of one request, once the ledger has it. */
async function rowOf(requestId: string, ms = 20_000): Promise<UsageRow> {
  const deadline = Date.now() + ms;
  for (;;) {
    const page = await stack.api('GET', `/v1/usage/requests?limit=100&key_id=${key.id}`, { key: key.secret });
    expect(page.status).toBe(200);
    const row = (page.body.data as UsageRow[]).find((candidate) => candidate.request_id === requestId);
    if (row) return row;
    if (Date.now() > deadline) throw new Error(`no usage row for ${requestId} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const openai = () => new OpenAI({ apiKey: key.secret, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 });
const hello = [{ role: 'user' as const, content: 'hello' }];
let sequence = 0;
const requestIdFor = (tag: string) => `req_routing_${tag}_${Date.now()}_${sequence++}`;

beforeAll(async () => {
  providerSim = await startSim(
    loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
  );
  stack = await startStack({
    label: 'routing_policy',
    ledger: {},
    edgeEnv: {
      PROVIDER_ENGINES: JSON.stringify({
        openai: [{ label: 'sim', dialect: 'openai', base_url: `${providerSim.url}/v1`, api_key: 'sk-sim' }],
      }),
      RATE_LIMIT_PER_MINUTE: '100000',
    },
  });
  key = await stack.seedKey();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await providerSim?.stop();
  for (const endpoint of endpoints) {
    endpoint.server.closeAllConnections();
    endpoint.server.close();
  }
});

describe('targets, retries and cooldowns', () => {
  it('two endpoints list a model, one answering 503: 100 calls succeed on the other, the first cools', async () => {
    const failing = await startEndpoint('fail-503');
    const healthy = await startEndpoint('ok');
    await saveEndpoint('failing', failing, ['pair-model']);
    await saveEndpoint('healthy', healthy, ['pair-model']);
    const servedBy = new Set<string>();
    const startedAt = Date.now();
    for (let i = 0; i < 100; i++) {
      const { data, response } = await openai()
        .chat.completions.create({ model: 'pair-model', messages: hello })
        .withResponse();
      expect(data.choices[0]?.message.content).toBe('Hello there');
      servedBy.add(response.headers.get('x-sbc-served-by') ?? '');
    }
    expect(servedBy).toEqual(new Set(['byo:healthy']));
    expect(healthy.calls()).toBe(100);
    // Three failures in a row cool it for at least 5 s: it is tried no more than three times per 5 s.
    expect(failing.calls()).toBeGreaterThanOrEqual(3);
    expect(failing.calls()).toBeLessThanOrEqual(3 * (1 + Math.floor((Date.now() - startedAt) / 5_000)));
    const metrics = await (await fetch(`${stack.edge.url}/metrics`)).text();
    const failed = /sbc_upstream_attempts_total\{target="byo",outcome="failed"[^}]*\} (\d+)/.exec(metrics);
    expect(Number(failed?.[1])).toBe(failing.calls());
  }, 60_000);

  it('a stream broken before its first chunk is retried; one broken after it ends in an error event', async () => {
    const flaky = await startEndpoint('cut-before-first-chunk-once');
    const cut = await startEndpoint('cut-after-first-chunk');
    await saveEndpoint('flaky', flaky, ['flaky-model']);
    await saveEndpoint('cut', cut, ['cut-model']);

    const { data: stream, response } = await openai()
      .chat.completions.create({ model: 'flaky-model', messages: hello, stream: true })
      .withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello');
    expect(response.headers.get('x-sbc-attempts')).toBe('2');
    expect(flaky.calls()).toBe(2);

    const broken = await openai().chat.completions.create({ model: 'cut-model', messages: hello, stream: true });
    const error = await rejectionOf(
      (async () => {
        for await (const chunk of broken) void chunk;
      })(),
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(cut.calls()).toBe(1);
  }, 30_000);

  it('a caller hanging up while its call waits to retry stops it at once: one attempt, nothing billed', async () => {
    const slow = await startEndpoint('slow-503');
    await saveEndpoint('slow', slow, ['slow-model']);
    const requestId = requestIdFor('hangup');
    const aborted = new AbortController();
    const call = fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'slow-model', messages: hello }),
      signal: aborted.signal,
    });
    // The first attempt answered 503 with retry-after: 2; the call now waits to retry.
    setTimeout(() => aborted.abort(), 700);
    await rejectionOf(call);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(slow.calls()).toBe(1);
    const row = await rowOf(requestId);
    expect(row).toMatchObject({ status: 499, credits_charged: 0 });
  }, 30_000);
});

describe('every target cooling', () => {
  it('is a 429 upstream_cooling with retry-after and the rate-limit headers, and no upstream call', async () => {
    const limited = await startEndpoint('rate-limited-30s');
    await saveEndpoint('limited30', limited, ['cooling-model']);
    // The first call meets the 429 and cools the endpoint for 30 s; this edge's one half-open call may follow.
    let refusal: Response | undefined;
    for (let call = 0; call < 4 && !refusal; call++) {
      const res = await fetch(`${stack.edge.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'cooling-model', messages: hello }),
      });
      const body = (await res.json()) as { error?: { code?: string } };
      expect(res.status).toBe(429);
      if (body.error?.code === 'upstream_cooling') refusal = res;
    }
    expect(refusal).toBeDefined();
    const before = limited.calls();
    expect(before).toBeLessThanOrEqual(2);
    expect(Number(refusal!.headers.get('retry-after'))).toBeGreaterThan(20);
    expect(Number(refusal!.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
    expect(refusal!.headers.get('x-ratelimit-remaining')).not.toBeNull();
    const again = await openai()
      .chat.completions.create({ model: 'cooling-model', messages: hello })
      .catch((error: unknown) => error);
    expect(again).toMatchObject({ status: 429, code: 'upstream_cooling' });
    expect(limited.calls()).toBe(before);
  }, 30_000);
});

// Cooldowns are shared through Redis: without one, each edge keeps its own and there is nothing to show.
(testBackends().redisUrl ? describe : describe.skip)('cooldowns shared by every edge', () => {
  it('a 429 with retry-after: 5 seen by one edge cools that target for 5 s on another edge too', async () => {
    // `limited` is the only weighted endpoint, so it is tried first whenever it is not cooling.
    const limited = await startEndpoint('rate-limited-once');
    const standby = await startEndpoint('ok');
    await saveEndpoint('limited', limited, ['shared-cooldown-model'], 1);
    await saveEndpoint('standby', standby, ['shared-cooldown-model'], 0);
    const otherEdge = await stack.startEdge(simHouseOnly(stack.sim.url));
    const viaOtherEdge = new OpenAI({ apiKey: key.secret, baseURL: `${otherEdge.url}/v1`, maxRetries: 0 });
    const call = (client: OpenAI, requestId: string) =>
      client.chat.completions
        .create({ model: 'shared-cooldown-model', messages: hello }, { headers: { 'x-request-id': requestId } })
        .withResponse();

    const firstId = requestIdFor('shared_cooldown');
    const first = await call(openai(), firstId);
    const limitedAt = Date.now();
    expect(first.response.headers.get('x-sbc-served-by')).toBe('byo:standby');
    expect(first.response.headers.get('x-sbc-attempts')).toBe('2');
    expect(limited.calls()).toBe(1);
    const row = await rowOf(firstId);
    expect(row).toMatchObject({ served_by: 'byo:standby', attempts: 2, credits_charged: 0 });

    // The other edge never saw the 429, yet skips the target while its cooldown runs.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < 5; i++) {
      const { response } = await call(viaOtherEdge, requestIdFor('shared_cooldown'));
      expect(response.headers.get('x-sbc-served-by')).toBe('byo:standby');
      expect(response.headers.get('x-sbc-attempts')).toBe('1');
    }
    expect(limited.calls()).toBe(1);

    // Once the 5 s are over, the other edge's calls go to it again (it answers now).
    let servedBy = '';
    while (servedBy !== 'byo:limited') {
      expect(Date.now() - limitedAt).toBeLessThan(15_000);
      await new Promise((resolve) => setTimeout(resolve, 250));
      servedBy = (await call(viaOtherEdge, requestIdFor('shared_cooldown'))).response.headers.get('x-sbc-served-by')!;
    }
    expect(Date.now() - limitedAt).toBeGreaterThanOrEqual(4_500);
    expect(limited.calls()).toBe(2);
  }, 60_000);
});

describe('credits, own endpoints and fallback models', () => {
  it('route auto with its own endpoint down is served on credits and billed', async () => {
    const down = await startEndpoint('fail-503');
    await saveEndpoint('down', down, ['gpt-6-astra']);
    const requestId = requestIdFor('auto');
    const { data, response } = await openai()
      .chat.completions.create({ model: 'gpt-6-astra', messages: hello }, { headers: { 'x-request-id': requestId } })
      .withResponse();
    expect(data.model).toBe('gpt-6-astra');
    expect(response.headers.get('x-sbc-served-by')).toBe('provider:openai/sim');
    expect(response.headers.get('x-sbc-attempts')).toBe('2');
    const row = await rowOf(requestId);
    expect(row).toMatchObject({ status: 200, is_byok: false, upstream: 'provider:openai' });
    expect(row.credits_charged).toBeGreaterThan(0);
  }, 30_000);

  it('route byo answers its own endpoint’s failure in the caller’s dialect and charges nothing', async () => {
    const minted = await stack.api('POST', '/v1/keys', { key: key.secret, body: { name: 'own only', route: 'byo' } });
    expect(minted.status).toBe(201);
    const anthropic = new Anthropic({ apiKey: minted.body.key as string, baseURL: stack.edge.url, maxRetries: 0 });
    const error = await rejectionOf(
      anthropic.messages.create({ model: 'gpt-6-astra', max_tokens: 16, messages: hello }),
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const failure = error as InstanceType<typeof Anthropic.APIError>;
    expect(failure.status).toBe(503);
    expect(failure.error).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    expect(failure.headers?.get('x-sbc-served-by')).toBe('byo:down');
    const byoId = minted.body.id as string;
    const rows = await stack.api('GET', `/v1/usage/requests?limit=10&key_id=${byoId}`, { key: key.secret });
    for (const row of rows.body.data as UsageRow[]) expect(row.credits_charged).toBe(0);
  }, 30_000);

  it('`models` is tried once the named model’s targets are exhausted; the reply names who answered', async () => {
    const dead = await startEndpoint('fail-503');
    await saveEndpoint('dead', dead, ['dead-model']);
    const { data, response } = await openai()
      .chat.completions.create({ model: 'dead-model', messages: hello, models: ['house'] } as never)
      .withResponse();
    expect((data as OpenAI.ChatCompletion).model).toBe('house');
    expect(response.headers.get('x-sbc-served-by')).toBe('house');
    expect(Number(response.headers.get('x-sbc-attempts'))).toBeGreaterThanOrEqual(2);
    expect(dead.bodies.every((body) => !('models' in body))).toBe(true);
  }, 30_000);

  it('an unknown model in `models` is a 400 on `models` in the caller’s dialect, before any call', async () => {
    const dead = await startEndpoint('ok');
    await saveEndpoint('unused', dead, ['unused-model']);
    const chat = await rejectionOf(
      openai().chat.completions.create({ model: 'unused-model', messages: hello, models: ['no-such-model'] } as never),
    );
    expect(chat).toMatchObject({ status: 400, param: 'models' });
    const anthropic = new Anthropic({ apiKey: key.secret, baseURL: stack.edge.url, maxRetries: 0 });
    const messages = await rejectionOf(
      anthropic.messages.create({ model: 'unused-model', max_tokens: 8, messages: hello, models: [] } as never),
    );
    expect(messages).toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });
    // A fallback the key's allowed_models do not cover is refused the same way.
    const minted = await stack.api('POST', '/v1/keys', {
      key: key.secret,
      body: { name: 'one model', allowed_models: ['unused-model'] },
    });
    expect(minted.status).toBe(201);
    const narrow = new OpenAI({ apiKey: minted.body.key as string, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 });
    const notAllowed = await rejectionOf(
      narrow.chat.completions.create({ model: 'unused-model', messages: hello, models: ['house'] } as never),
    );
    expect(notAllowed).toMatchObject({ status: 400, param: 'models' });
    expect(dead.calls()).toBe(0);
  }, 30_000);
});

import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callerDialect, type CallerDialect } from '@sbc/dialects';
import { createEgressPolicy } from '@sbc/egress';
import { rejectionOf } from '@sbc/testing';
import type { Engine } from '../routing/engines';
import { createUpstreamClient, isAbort, type UpstreamClient } from '../upstream/client';
import { dispatch, type Dispatched, type InFlight } from './dispatch';
import type { CallerCall } from './plan';

const OPTIONS = {
  connectTimeoutMs: 1_000,
  headersTimeoutMs: 300,
  bodyTimeoutMs: 300,
  idleTimeoutMs: 5_000,
  connectionsPerOrigin: 4,
  queueLimit: 16,
};
const EGRESS = createEgressPolicy({ privateEgress: 'operators' });
const CHAT_REPLY = { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { content: 'hi' } }] };

/** A loopback upstream: answers a chat reply, or holds every request open when `hold` is set. */
async function startUpstream() {
  const held: ServerResponse[] = [];
  let hold = false;
  const server: Server = createServer((req, res) => {
    req.resume();
    if (hold) held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CHAT_REPLY));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    holdRequests: () => (hold = true),
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on: a refused connection. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

function engineAt(baseUrl: string, dialect: Engine['dialect'] = 'openai'): Engine {
  return { dialect, baseUrl, model: 'engine-model', headers: {}, label: baseUrl };
}

function callIn(adapter: CallerDialect): CallerCall {
  const body =
    adapter.name === 'messages'
      ? { model: 'caller-model', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }
      : { model: 'caller-model', messages: [{ role: 'user', content: 'hi' }] };
  return { adapter, body, callerModel: 'caller-model', stream: false, includeUsage: false };
}

describe('dispatch: an upstream that gives no answer', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let client: UpstreamClient;
  const run = (call: CallerCall, engines: Engine[], inFlight: InFlight = { callerGone: false }) =>
    dispatch(call, engines, { upstream: client, defaultMaxTokens: 1_024 }, inFlight, {});

  beforeEach(async () => {
    upstream = await startUpstream();
    client = createUpstreamClient(OPTIONS, EGRESS);
  });
  afterEach(async () => {
    await client.close();
    await upstream.close();
  });

  it('an unreachable lone engine fails the call with 502 upstream_error', async () => {
    const dispatched = await run(callIn(callerDialect('chat')), [engineAt(await closedPortUrl())]);
    expect(dispatched).toMatchObject({
      kind: 'failed',
      exhausted: false,
      failure: { status: 502, code: 'upstream_error', message: 'The upstream could not be reached.' },
    });
  });

  it('an unreachable engine falls back to the next, which answers', async () => {
    const next = engineAt(upstream.baseUrl);
    const dispatched = await run(callIn(callerDialect('chat')), [engineAt(await closedPortUrl()), next]);
    expect(dispatched).toMatchObject({ kind: 'reply', engine: next });
    await (dispatched as Extract<Dispatched, { kind: 'reply' }>).reply.text();
  });

  it('an engine that does not answer in time fails the call with 504 upstream_timeout', async () => {
    upstream.holdRequests();
    const dispatched = await run(callIn(callerDialect('chat')), [engineAt(upstream.baseUrl)]);
    expect(dispatched).toMatchObject({
      kind: 'failed',
      failure: { status: 504, code: 'upstream_timeout', message: 'The upstream did not answer in time.' },
    });
  });

  it.each([
    ['chat', 503],
    ['messages', 529],
  ] as const)(
    "a full pool is an overload in the caller's dialect (%s: %i) with a retry-after",
    async (dialect, status) => {
      await client.close();
      client = createUpstreamClient({ ...OPTIONS, connectionsPerOrigin: 1, queueLimit: 0 }, EGRESS);
      upstream.holdRequests();
      const engine = engineAt(upstream.baseUrl, dialect === 'messages' ? 'anthropic' : 'openai');
      const first = client.send({ engine, path: '/chat/completions', body: '{}' });
      const dispatched = await run(callIn(callerDialect(dialect)), [engine]);
      expect(dispatched).toMatchObject({
        kind: 'failed',
        exhausted: false,
        failure: { status, code: 'overloaded_error' },
        headers: { 'retry-after': '1' },
      });
      first.abort();
      await rejectionOf(first.head);
    },
  );

  it('a caller already gone is not sent upstream: dispatch rejects with the abort', async () => {
    const error = await rejectionOf(
      run(callIn(callerDialect('chat')), [engineAt(upstream.baseUrl)], { callerGone: true }),
    );
    expect(isAbort(error)).toBe(true);
  });
});

import { once } from 'node:events';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { loadGatewayConfig, start as startGateway } from '@sbc/app-gateway';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { within } from '../support/model-calls.harness';
import { anthropicFor, OWNER_KEY as KEY, openAiFor, simHouse, startStack, type Stack } from '../support/stack';

/**
 * The edge's drain, as SIGTERM runs it (`stop()`): idle kept-alive sockets close at once, answers begun
 * from then on say `connection: close`, new connections are refused, running calls finish until
 * SHUTDOWN_DRAIN_MS; then a stream still running ends with its dialect's error event, and a call still
 * waiting on its upstream is answered 503 in its dialect, before their sockets close — never a reset.
 */
let stack: Stack;
/** A simulator answering 20 tokens a second: `sim-tokens:400` streams for 20 s, `sim-tokens:10` for half a second. */
let pacedSim: RunningSim;
const DRAIN_MS = 2_000;

beforeAll(async () => {
  stack = await startStack({ label: 'edge_drain', house: simHouse });
  pacedSim = await startSim(
    loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '20', LOG_LEVEL: 'silent' }),
  );
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await pacedSim?.stop();
});

interface RawAnswer {
  res: IncomingMessage;
  body: string;
  socket: Socket;
}

/** One request over `agent` (kept alive between requests), read to its end. */
async function call(url: string, agent: Agent, method: string, path: string, body?: unknown): Promise<RawAnswer> {
  const req = request(`${url}${path}`, {
    method,
    agent,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  });
  const socket = new Promise<Socket>((resolve) => req.once('socket', resolve));
  req.end(body === undefined ? undefined : JSON.stringify(body));
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk;
  return { res, body: text, socket: await socket };
}

const prompt = (text: string) => [{ role: 'user' as const, content: text }];

it(
  'on SIGTERM the edge drains: kept-alive callers told to close, new ones refused, short calls finish, long calls ' +
    'end in their dialect',
  async () => {
    const edge = await stack.startEdge(
      {
        house: [{ dialect: 'openai', base_url: `${pacedSim.url}/v1`, model: 'sim-large' }],
        'house-omni': [{ dialect: 'anthropic', base_url: pacedSim.url, model: 'sim-large' }],
      },
      { SHUTDOWN_DRAIN_MS: String(DRAIN_MS) },
    );
    const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    const busyAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // Two kept-alive connections: one left idle, one about to carry a call that is answered after SIGTERM.
      const idle = await call(edge.url, idleAgent, 'GET', '/v1/keys/whoami');
      expect(idle.res.headers.connection).toBe('keep-alive');
      const idleClosed = once(idle.socket, 'close');
      const warm = await call(edge.url, busyAgent, 'GET', '/v1/keys/whoami');
      const busyAnswer = call(edge.url, busyAgent, 'POST', '/v1/chat/completions', {
        model: 'house',
        messages: prompt('sim-tokens:20 a short answer'),
        max_tokens: 100,
      });

      // Long streams in both dialects, and a short one, all under way when the signal lands.
      const chatDeltas: string[] = [];
      const chat = await openAiFor(edge.url).chat.completions.create({
        model: 'house',
        messages: prompt('sim-tokens:400 a long story'),
        stream: true,
        max_tokens: 1_000,
      });
      const chatEnded = (async () => {
        for await (const chunk of chat) chatDeltas.push(chunk.choices[0]?.delta?.content ?? '');
      })().then(
        () => undefined,
        (error: unknown) => error,
      );
      const messagesText: string[] = [];
      const messages = anthropicFor(edge.url).messages.stream({
        model: 'house-omni',
        max_tokens: 1_000,
        messages: prompt('sim-tokens:400 a long story'),
      });
      messages.on('text', (text) => messagesText.push(text));
      const messagesEnded = messages.finalMessage().then(
        () => undefined,
        (error: unknown) => error,
      );
      // A call answered in one piece that would take 20 s: still waiting on its upstream at the deadline.
      const unfinished = openAiFor(edge.url)
        .chat.completions.create({
          model: 'house',
          messages: prompt('sim-tokens:400 a long answer'),
          max_tokens: 1_000,
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      const short = await openAiFor(edge.url).chat.completions.create({
        model: 'house',
        messages: prompt('sim-tokens:10 a short story'),
        stream: true,
        max_tokens: 100,
      });
      const shortDeltas: string[] = [];
      const shortEnded = (async () => {
        let finish: string | null = null;
        for await (const chunk of short) {
          shortDeltas.push(chunk.choices[0]?.delta?.content ?? '');
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        return finish;
      })();
      expect(await within(5_000, () => chatDeltas.length > 1 && messagesText.length > 1)).toBeGreaterThanOrEqual(0);
      // The short call on the busy kept-alive socket must still be waiting for its answer.
      expect(warm.socket.destroyed).toBe(false);

      const stopStartedAt = Date.now();
      const stopped = edge.stop();

      // The idle kept-alive socket is closed at once; a new connection is refused.
      await idleClosed;
      expect(Date.now() - stopStartedAt).toBeLessThan(500);
      const fresh = request(`${edge.url}/v1/keys/whoami`, {
        agent: false,
        headers: { authorization: `Bearer ${KEY}` },
      });
      fresh.end();
      const [refusal] = (await once(fresh, 'error')) as [NodeJS.ErrnoException];
      expect(refusal.code).toBe('ECONNREFUSED');

      // The call in flight on the busy kept-alive socket is answered in full, told to close, and its socket closes.
      const busy = await busyAnswer;
      expect(busy.res.statusCode).toBe(200);
      expect(busy.res.headers.connection).toBe('close');
      expect(JSON.parse(busy.body).choices[0].finish_reason).toBe('stop');
      expect(busy.socket).toBe(warm.socket);
      expect(await within(1_000, () => busy.socket.destroyed)).toBeGreaterThanOrEqual(0);

      // The short stream finishes normally within the drain time.
      expect(await shortEnded).toBe('stop');
      expect(shortDeltas.join('')).not.toBe('');

      // The long streams end at the deadline with their dialect's error event: an API error, not a reset.
      const chatError = await chatEnded;
      expect(Date.now() - stopStartedAt).toBeGreaterThanOrEqual(DRAIN_MS - 100);
      expect(chatError).toBeInstanceOf(OpenAI.APIError);
      expect(chatError).not.toBeInstanceOf(OpenAI.APIConnectionError);
      expect((chatError as InstanceType<typeof OpenAI.APIError>).message).toMatch(/restarting/);
      const messagesError = await messagesEnded;
      expect(messagesError).toBeInstanceOf(Anthropic.APIError);
      expect(messagesError).not.toBeInstanceOf(Anthropic.APIConnectionError);
      expect((messagesError as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'overloaded_error' },
      });
      // The call still waiting at the deadline is answered 503 in its dialect, not reset.
      const unfinishedError = await unfinished;
      expect(unfinishedError).toBeInstanceOf(OpenAI.APIError);
      expect(unfinishedError).not.toBeInstanceOf(OpenAI.APIConnectionError);
      expect(unfinishedError).toMatchObject({ status: 503, message: expect.stringMatching(/restarting/) });
      expect(chatDeltas.length).toBeGreaterThan(10);
      expect(messagesText.length).toBeGreaterThan(10);

      await stopped;
      expect(Date.now() - stopStartedAt).toBeLessThan(DRAIN_MS + 2_000);
    } finally {
      idleAgent.destroy();
      busyAgent.destroy();
      await edge.stop();
    }
  },
  30_000,
);

it('a caller hanging up mid-body or mid-stream is logged at info, never as an error', async () => {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = createLogger({
    service: 'gateway',
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  const edge = await startGateway(
    loadGatewayConfig({
      PORT: '0',
      BASE_URL: 'https://gw.test',
      ACCOUNT_GRPC_TARGET: stack.account.grpcAddress,
      REDIS_URL: testBackends().redisUrl,
      HOUSE_ENGINES: JSON.stringify({
        house: [{ dialect: 'openai', base_url: `${pacedSim.url}/v1`, model: 'sim-large' }],
      }),
      USAGE_EVENTS: 'off',
    }),
    { logger },
  );
  try {
    const { port } = new URL(edge.url);
    for (const path of ['/v1/chat/completions', '/v1/keys']) {
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: edge.test\r\nauthorization: Bearer ${KEY}\r\ncontent-type: ` +
          `application/json\r\ncontent-length: 1000\r\n\r\n{"model":`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
    }
    const aborted = new AbortController();
    const stream = await openAiFor(edge.url).chat.completions.create(
      { model: 'house', messages: prompt('sim-tokens:400 a long story'), stream: true, max_tokens: 1_000 },
      { signal: aborted.signal },
    );
    // The SDK ends the iteration quietly when its signal aborts.
    let deltas = 0;
    for await (const _chunk of stream) if (++deltas === 3) aborted.abort();
    expect(deltas).toBeLessThan(10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ level: 30, msg: 'the caller hung up mid-request' }));
  } finally {
    await edge.stop();
  }
});

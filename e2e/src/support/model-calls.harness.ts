import { createServer, connect, type Socket } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createMemoryPubSub, type PubSub } from '@sbc/cache';
import { hashSecret, maskSecret, newId, newSecret } from '@sbc/ids';
import { createTestDatabase, freePort, testBackends, type TestDatabase } from '@sbc/testing';
import type { RunningAccount } from '@sbc/app-account';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { startTestAccount } from './test-account';

/**
 * The whole model path for end-to-end tests: the simulated engine (both dialects, no latency), the account
 * service with a bootstrap key on a fresh test database, and the edge whose house models point at the sim —
 * `house` in the OpenAI dialect, `house-omni` in the Anthropic one — driven by the official SDKs.
 */
export const KEY = 'sbc_model_calls_bootstrap_0123456789abcdef';

/** One house engine as HOUSE_ENGINES spells it. */
export interface EngineSpec {
  dialect: 'openai' | 'anthropic';
  base_url: string;
  model: string;
  label?: string;
}
export type HouseSpec = Partial<Record<'house' | 'house-omni' | 'house-fast', EngineSpec[]>>;

export interface Stack {
  sim: RunningSim;
  account: RunningAccount;
  edge: RunningGateway;
  openai: OpenAI;
  anthropic: Anthropic;
  /** Starts a further edge on the same account service (stopped with the stack). */
  startEdge(house: HouseSpec, extraEnv?: Record<string, string>): Promise<RunningGateway>;
  /** Inserts a caller key on the bootstrap user with these scopes; returns its id and secret. */
  createKey(scopes: string[]): Promise<{ id: string; secret: string }>;
  stop(): Promise<void>;
}

export function openAiFor(url: string, apiKey = KEY): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0 });
}

export function anthropicFor(url: string, apiKey = KEY): Anthropic {
  return new Anthropic({ apiKey, baseURL: url, maxRetries: 0 });
}

/** The usual house mapping: the same sim behind both upstream dialects (with and without `/v1`). */
export function simHouse(simUrl: string, fast: EngineSpec = { dialect: 'openai', base_url: simUrl, model: 'sim-error-429' }): HouseSpec {
  return {
    house: [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large' }],
    'house-omni': [{ dialect: 'anthropic', base_url: simUrl, model: 'sim-large' }],
    'house-fast': [fast],
  };
}

export async function startStack(label: string, house: (simUrl: string) => HouseSpec = (url) => simHouse(url)): Promise<Stack> {
  const redisUrl = testBackends().redisUrl;
  const pubsub: PubSub | undefined = redisUrl ? undefined : createMemoryPubSub();
  const edges: RunningGateway[] = [];
  let db: TestDatabase | undefined;
  let sim: RunningSim | undefined;
  let account: RunningAccount | undefined;
  const stop = async () => {
    for (const edge of edges.splice(0).reverse()) await edge.stop();
    await account?.stop();
    await sim?.stop();
    await pubsub?.close();
    await db?.drop();
  };
  try {
    sim = await startSim(loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }));
    db = await createTestDatabase(label);
    account = await startTestAccount({ databaseUrl: db.databaseUrl, redisUrl, pubsub, bootstrapKey: KEY });
    const running = account;
    const startEdge = async (spec: HouseSpec, extraEnv: Record<string, string> = {}) => {
      const edge = await startGateway(
        loadGatewayConfig({
          PORT: '0',
          BASE_URL: 'https://gw.test',
          ACCOUNT_GRPC_TARGET: running.grpcAddress,
          REDIS_URL: redisUrl,
          HOUSE_ENGINES: JSON.stringify(spec),
          KEY_USE_FLUSH_MS: '50',
          LOG_LEVEL: 'silent',
          ...extraEnv,
        }),
        { pubsub },
      );
      edges.push(edge);
      return edge;
    };
    const edge = await startEdge(house(sim.url));
    const createKey = async (scopes: string[]) => {
      const prisma = running.database.prisma;
      const owner = await prisma.callerKey.findUnique({ where: { keyHash: new Uint8Array(hashSecret(KEY)) } });
      const secret = newSecret('sbc');
      const id = newId('key');
      await prisma.callerKey.create({
        data: { id, userId: owner!.userId, name: `test ${scopes.join(' ')}`, keyHash: new Uint8Array(hashSecret(secret)), mask: maskSecret(secret), scopes, route: 'auto', mode: 'model' },
      });
      return { id, secret };
    };
    return { sim, account, edge, openai: openAiFor(edge.url), anthropic: anthropicFor(edge.url), startEdge, createKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A port nothing listens on (an engine that is down). */
export async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/**
 * A TCP relay in front of an engine, so a test can see when the edge drops its upstream connection
 * (an aborted request destroys its socket; a finished one stays in the keep-alive pool).
 */
export interface Relay {
  url: string;
  /** Connections the edge opened through the relay so far. */
  opened(): number;
  /** Connections currently open from the edge. */
  open(): number;
  /** Resolves once some bytes from the edge reached the engine. */
  requested(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRelay(targetUrl: string): Promise<Relay> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let opened = 0;
  let onRequest: () => void = () => undefined;
  const requested = new Promise<void>((resolve) => (onRequest = resolve));
  const server = createServer((client) => {
    opened += 1;
    sockets.add(client);
    const upstream = connect(Number(target.port), target.hostname);
    client.on('data', () => onRequest());
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      sockets.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    client.on('error', drop);
    upstream.on('close', drop);
    upstream.on('error', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    opened: () => opened,
    open: () => sockets.size,
    requested: () => requested,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it holds or `ms` pass; resolves with the time it took, or -1. */
export async function within(ms: number, check: () => boolean): Promise<number> {
  const startedAt = Date.now();
  while (Date.now() - startedAt <= ms) {
    if (check()) return Date.now() - startedAt;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return -1;
}

/** Raw SSE frames of a streamed answer, each as its `event` (if any) and parsed or literal `data`. */
export interface RawFrame {
  event?: string;
  data: string;
  json?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function rawStream(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ res: Response; frames: RawFrame[]; text: string }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const frames: RawFrame[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    const frame: RawFrame = { data: '' };
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event:')) frame.event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0 && frame.event === undefined) continue;
    frame.data = data.join('\n');
    try {
      frame.json = JSON.parse(frame.data);
    } catch {
      // `[DONE]` and the like stay literal.
    }
    frames.push(frame);
  }
  return { res, frames, text };
}

/** The weather tool the sim calls when asked `sim:tool weather …`; it fills arguments from the schema. */
export const weatherSchema = {
  type: 'object',
  properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer' } },
  required: ['location'],
};
export const weatherArguments = { location: 'simulated location', unit: 'celsius', days: 1 };
export const TOOL_PROMPT = 'sim:tool weather in Paris';
export const TOOL_RESULT = 'sunny and 21 degrees';
export const TEXT_PROMPT = 'Hello there, how are you today?';
/** What the sim answers to TEXT_PROMPT and to TOOL_RESULT, whatever the dialect. */
export const TEXT_REPLY = `Simulated reply to: ${TEXT_PROMPT}`;
export const TOOL_REPLY = `Simulated reply using the tool result: ${TOOL_RESULT}`;

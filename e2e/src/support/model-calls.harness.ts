import { createServer, connect, type Socket } from 'node:net';
import { freePort } from '@sbc/testing';
import { OWNER_KEY } from './stack';

/**
 * Helpers of the model-path suites, which drive startStack's edge (house models on the sim: `house` in the
 * OpenAI dialect, `house-omni` in the Anthropic one; see simHouse) with the official SDKs and raw HTTP.
 */

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

export async function rawStream(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ res: Response; frames: RawFrame[]; text: string }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OWNER_KEY}`, 'content-type': 'application/json', ...headers },
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
  properties: {
    location: { type: 'string' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer' },
  },
  required: ['location'],
};
export const weatherArguments = { location: 'simulated location', unit: 'celsius', days: 1 };
export const TOOL_PROMPT = 'sim:tool weather in Paris';
export const TOOL_RESULT = 'sunny and 21 degrees';
export const TEXT_PROMPT = 'Hello there, how are you today?';
/** What the sim answers to TEXT_PROMPT and to TOOL_RESULT, whatever the dialect. */
export const TEXT_REPLY = `Simulated reply to: ${TEXT_PROMPT}`;
export const TOOL_REPLY = `Simulated reply using the tool result: ${TOOL_RESULT}`;

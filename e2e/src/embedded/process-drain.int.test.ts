import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@sbc/testing';

/**
 * SIGTERM to the embedded bundle (`npm start`) while long streams and a kept-alive caller are in flight:
 * the kept-alive caller's answer says `connection: close`, and each stream still running at
 * SHUTDOWN_DRAIN_MS ends with its dialect's error event and a clean end of body, then the process exits 0.
 */
const BUNDLE = path.resolve(__dirname, '../../../dist/apps/embedded/main.js');
const KEY = 'sbc_process_drain_key_0123456789abcdef';
const DRAIN_MS = 2_000;
// A first start creates four PGlite databases, one after another: tens of seconds on a loaded machine.
const FIRST_START_MS = 90_000;

interface Answer {
  res: IncomingMessage;
  body: string;
  /** Set when the body broke off (a reset) instead of ending. */
  broken?: Error;
}

/** A POST read to its end; a body that breaks off is reported, not thrown. */
async function post(
  url: string,
  agent: Agent | false,
  body: unknown,
  onData: (text: string) => void = () => undefined,
): Promise<Answer> {
  const req = request(url, {
    method: 'POST',
    agent,
    headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY, 'content-type': 'application/json' },
  });
  req.end(JSON.stringify(body));
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.setEncoding('utf8');
  let text = '';
  try {
    for await (const chunk of res) {
      text += chunk;
      onData(text);
    }
  } catch (error) {
    return { res, body: text, broken: error as Error };
  }
  return { res, body: text, broken: res.complete ? undefined : new Error('body ended early') };
}

describe('the embedded bundle on SIGTERM', () => {
  let dataDir: string;
  beforeAll(async () => {
    if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run "npm run build" first (npm test does)`);
    dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-process-drain-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'answers a kept-alive caller with connection: close and ' +
      'ends long streams with their dialect’s error event before ' +
      'exiting 0',
    async () => {
      const port = await freePort();
      const child = spawn(process.execPath, [BUNDLE], {
        env: {
          PATH: process.env.PATH ?? '',
          LOG_LEVEL: 'warn',
          SBC_DATA_DIR: path.join(dataDir, 'data'),
          PORT: String(port),
          SBC_BOOTSTRAP_KEY: KEY,
          SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
          // The bundled simulator answers 20 tokens a second: `sim-tokens:400` streams for 20 s.
          SIM_TOKENS_PER_SECOND: '20',
          SIM_LATENCY_MS: '0',
        },
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const startDeadline = Date.now() + FIRST_START_MS - 10_000;
        while (!/serving at/.test(output)) {
          if (Date.now() > startDeadline || child.exitCode !== null) throw new Error(`did not start:\n${output}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const base = `http://127.0.0.1:${port}`;
        const long = (text: string) => [{ role: 'user', content: `sim-tokens:400 ${text}` }];
        let chatStarted = false;
        let messagesStarted = false;
        const chat = post(
          `${base}/v1/chat/completions`,
          false,
          { model: 'house', messages: long('a long story'), stream: true, max_tokens: 1_000 },
          () => (chatStarted = true),
        );
        const messages = post(
          `${base}/v1/messages`,
          false,
          { model: 'house', messages: long('a long story'), stream: true, max_tokens: 1_000 },
          () => (messagesStarted = true),
        );
        // A kept-alive connection, then a call on it that is answered only after the signal (20 tokens: 1 s).
        const warm = await post(`${base}/v1/chat/completions`, agent, {
          model: 'house',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 5,
        });
        expect(warm.res.headers.connection).toBe('keep-alive');
        const kept = post(`${base}/v1/chat/completions`, agent, {
          model: 'house',
          messages: [{ role: 'user', content: 'sim-tokens:20 hi' }],
          max_tokens: 100,
        });
        while (!chatStarted || !messagesStarted) await new Promise((resolve) => setTimeout(resolve, 20));
        // The kept-alive call must have reached the edge: a request still on the wire when the drain begins
        // meets a socket the edge sees as idle and closes.
        await new Promise((resolve) => setTimeout(resolve, 300));

        const signalledAt = Date.now();
        child.kill('SIGTERM');

        const keptAnswer = await kept;
        expect(keptAnswer.res.statusCode).toBe(200);
        expect(keptAnswer.res.headers.connection).toBe('close');
        expect(JSON.parse(keptAnswer.body).choices[0].finish_reason).toBe('stop');

        const chatAnswer = await chat;
        expect(chatAnswer.broken).toBeUndefined();
        expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(DRAIN_MS - 100);
        const chatLast = chatAnswer.body.trim().split('\n\n').pop()!;
        expect(JSON.parse(chatLast.replace(/^data: /, ''))).toMatchObject({
          error: { type: 'server_error', message: expect.stringMatching(/restarting/) },
        });
        const messagesAnswer = await messages;
        expect(messagesAnswer.broken).toBeUndefined();
        const messagesLast = messagesAnswer.body.trim().split('\n\n').pop()!;
        expect(messagesLast.split('\n')[0]).toBe('event: error');
        expect(JSON.parse(messagesLast.split('\n')[1]!.replace(/^data: /, ''))).toMatchObject({
          type: 'error',
          error: { type: 'overloaded_error' },
        });

        expect(await exited).toBe(0);
        expect(output).not.toMatch(/"level":50/);
      } finally {
        agent.destroy();
        child.kill('SIGKILL');
      }
    },
    FIRST_START_MS + 30_000,
  );
});

import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy } from '@sbc/egress';
import { rejectionOf } from '@sbc/testing';
import { UpstreamError } from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import {
  classifyTransportError,
  createUpstreamClient,
  HOP_HEADER,
  isAbort,
  type UpstreamCall,
  type UpstreamClient,
} from './client';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A real upstream on loopback whose behaviour each test sets, counting requests that arrive and close. */
async function startUpstream() {
  let handler: Handler = (_req, res) => res.end('{}');
  let arrived = 0;
  let open = 0;
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    arrived += 1;
    open += 1;
    res.once('close', () => (open -= 1));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      handler(req, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    bodies,
    arrived: () => arrived,
    open: () => open,
    answer(next: Handler) {
      handler = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    server,
  };
}

function engineAt(baseUrl: string): Engine {
  return { dialect: 'openai', baseUrl, apiKey: 'upstream-secret', model: 'sim-large', headers: {}, label: 'test' };
}

const EGRESS = createEgressPolicy({ privateEgress: 'operators' });
const OPTIONS = {
  connectTimeoutMs: 1_000,
  headersTimeoutMs: 300,
  bodyTimeoutMs: 300,
  idleTimeoutMs: 5_000,
  connectionsPerOrigin: 8,
  queueLimit: 64,
};

async function until(what: string, check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('upstream client (undici dispatch)', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let client: UpstreamClient;
  const send = (body = '{"model":"sim-large"}'): UpstreamCall =>
    client.send({ engine: engineAt(upstream.baseUrl), path: '/chat/completions', body });

  beforeEach(async () => {
    upstream = await startUpstream();
    client = createUpstreamClient(OPTIONS, EGRESS);
  });
  afterEach(async () => {
    await client.close();
    upstream.server.closeAllConnections();
    await upstream.close();
  });

  it('posts the body with the engine credential and reads status, headers and the whole reply', async () => {
    let seen: IncomingMessage | undefined;
    upstream.answer((req, res) => {
      seen = req;
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      // Three writes, so the reply arrives in pieces.
      res.write('{"a":');
      setTimeout(() => res.write('"é'), 5);
      setTimeout(() => res.end('"}'), 10);
    });
    const call = send('{"model":"sim-large","x":1}');
    await call.head;
    expect(call.status).toBe(201);
    expect(call.headers['x-upstream']).toBe('yes');
    expect(await call.text()).toBe('{"a":"é"}');
    expect(upstream.bodies).toEqual(['{"model":"sim-large","x":1}']);
    expect(seen?.url).toBe('/v1/chat/completions');
    expect(seen?.headers.authorization).toBe('Bearer upstream-secret');
    expect(seen?.headers['content-type']).toBe('application/json');
  });

  it('a refused connection is 502 at the head', async () => {
    const port = (upstream.server.address() as AddressInfo).port;
    await upstream.close();
    const call = client.send({
      engine: engineAt(`http://127.0.0.1:${port}/v1`),
      path: '/chat/completions',
      body: '{}',
    });
    const error = await rejectionOf(call.head);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(502);
  });

  it('no response head within the headers timeout is 504', async () => {
    upstream.answer(() => undefined); // never answers
    const error = await rejectionOf(send().head);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(504);
  });

  it('a body that goes silent past the body timeout fails the reader with 504', async () => {
    upstream.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
    });
    const call = send();
    await call.head;
    await call.firstData();
    const error = await rejectionOf(call.text());
    expect((error as UpstreamError).status).toBe(504);
  });

  it('firstData waits for the first chunk, and rejects when the body breaks before one', async () => {
    upstream.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      setTimeout(() => res.destroy(), 20);
    });
    const call = send();
    await call.head;
    const error = await rejectionOf(call.firstData());
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(502);
  });

  it('held chunks reach a sink attached late, in order, then the end', async () => {
    upstream.answer((_req, res) => {
      res.writeHead(200);
      res.write('one,');
      setTimeout(() => res.end('two'), 20);
    });
    const call = send();
    await call.head;
    await call.firstData();
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) =>
      call.attach({ data: (chunk) => seen.push(chunk.toString()), end: resolve, error: reject }),
    );
    expect(seen.join('')).toBe('one,two');
  });

  it('abort before the head rejects it and closes the upstream request', async () => {
    upstream.answer(() => undefined);
    const call = send();
    await until('the request reached the upstream', () => upstream.arrived() === 1);
    call.abort();
    expect(isAbort(await rejectionOf(call.head))).toBe(true);
    await until('the upstream saw the request close', () => upstream.open() === 0);
  });

  it('abort mid-body fails the sink with the abort and closes the upstream request', async () => {
    upstream.answer((_req, res) => {
      res.writeHead(200);
      res.write('data: 1\n\n');
      // Keeps streaming until the client goes away.
      const timer = setInterval(() => res.write('data: more\n\n'), 5);
      res.once('close', () => clearInterval(timer));
    });
    const call = send();
    await call.head;
    await call.firstData();
    const ended = new Promise<unknown>((resolve) =>
      call.attach({ data: () => undefined, end: () => resolve('end'), error: resolve }),
    );
    call.abort();
    expect(isAbort(await ended)).toBe(true);
    await until('the upstream saw the request close', () => upstream.open() === 0);
  });

  it('abort before the request was sent stops it: the upstream never sees it', async () => {
    // One connection, held by a first request that never answers: the second waits in the pool's queue.
    await client.close();
    client = createUpstreamClient({ ...OPTIONS, headersTimeoutMs: 5_000, connectionsPerOrigin: 1 }, EGRESS);
    upstream.answer(() => undefined);
    const first = send();
    await until('the first request arrived', () => upstream.arrived() === 1);
    const queued = send();
    queued.abort();
    first.abort();
    expect(isAbort(await rejectionOf(first.head))).toBe(true);
    expect(isAbort(await rejectionOf(queued.head))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(upstream.arrived()).toBe(1);
  });

  it('pause holds the upstream back until resume (a slow caller slows the upstream, not the edge memory)', async () => {
    const CHUNK = 'x'.repeat(64 * 1024);
    let written = 0;
    let upstreamBlocked = false;
    upstream.answer((_req, res) => {
      res.writeHead(200);
      const pump = () => {
        while (written < 400) {
          written += 1;
          if (!res.write(CHUNK)) {
            upstreamBlocked = true;
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const call = send();
    await call.head;
    let received = 0;
    let holding = true;
    const done = new Promise<void>((resolve, reject) =>
      call.attach({
        data: (chunk) => {
          received += chunk.length;
          if (holding) call.pause();
        },
        end: resolve,
        error: reject,
      }),
    );
    // Paused after the first chunk: the upstream fills the socket buffers and stops well short of 400 chunks.
    await until('the upstream is held back', () => upstreamBlocked);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(written).toBeLessThan(400);
    expect(received).toBeLessThan(400 * CHUNK.length);
    holding = false;
    call.resume();
    await done;
    expect(received).toBe(400 * CHUNK.length);
  });

  it("marks every request with the hop header, which an endpoint's own headers cannot unset", async () => {
    let seen: IncomingMessage | undefined;
    upstream.answer((req, res) => {
      seen = req;
      res.end('{}');
    });
    const call = client.send({
      engine: { ...engineAt(upstream.baseUrl), headers: { 'X-Sbc-Hop': '' } },
      path: '/chat/completions',
      body: '{}',
    });
    await call.head;
    await call.text();
    expect(seen?.headers[HOP_HEADER]).toBe('1');
  });

  it(
    'a body that is not JSON is named by status and content ' +
      'type, never read back; JSON error messages are bounded',
    async () => {
      upstream.answer((_req, res) => {
        res.writeHead(502, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<html><body>internal dashboard: secret-42</body></html>');
      });
      const page = send();
      await page.head;
      expect(await page.json()).toBe('The upstream answered HTTP 502 with a body that is not JSON (text/html).');
      upstream.answer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('"a JSON string is text too: secret-43"');
      });
      const quoted = send();
      await quoted.head;
      expect(await quoted.json()).toMatch(
        /^The upstream answered HTTP 200 with a body that is not JSON \(text\/plain\)\.$/,
      );
      upstream.answer((_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'm'.repeat(10_000), type: 'invalid_request_error' } }));
      });
      const long = send();
      await long.head;
      const body = (await long.json()) as { error: { message: string; type: string } };
      expect(body.error.message.length).toBeLessThanOrEqual(501);
      expect(body.error.type).toBe('invalid_request_error');
    },
  );

  it("a caller's endpoint is dialed through the egress policy; the operator's engines as configured", async () => {
    upstream.answer((_req, res) => res.end('{}'));
    const tenant = client.send({
      engine: { ...engineAt(upstream.baseUrl), dialAs: 'tenant' },
      path: '/chat/completions',
      body: '{}',
    });
    const refused = await rejectionOf(tenant.head);
    expect(refused).toMatchObject({
      status: 502,
      message: expect.stringMatching(/^The upstream was not dialed: 127\.0\.0\.1 is a loopback or private address/),
    });
    for (const engine of [{ ...engineAt(upstream.baseUrl), dialAs: 'operator' as const }, engineAt(upstream.baseUrl)]) {
      const call = client.send({ engine, path: '/chat/completions', body: '{}' });
      await call.head;
      expect(call.status).toBe(200);
      await call.text();
    }
    expect(upstream.arrived()).toBe(2);
  });
});

describe('a transport failure, as the upstream failure it is', () => {
  it.each(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])(
    '%s is a 504 timeout',
    (code) => {
      const error = classifyTransportError(Object.assign(new Error('timed out'), { code }));
      expect(error).toMatchObject({ reason: 'timeout', status: 504, message: 'The upstream did not answer in time.' });
    },
  );

  it('a reset or refused connection is a 502 unreachable, the socket error kept only as its cause', () => {
    const reset = Object.assign(new Error('read ECONNRESET 10.1.2.3:443'), { code: 'ECONNRESET' });
    const error = classifyTransportError(reset);
    expect(error).toMatchObject({ reason: 'unreachable', status: 502, message: 'The upstream could not be reached.' });
    expect(error.cause).toBe(reset);
    expect(isAbort(error)).toBe(false);
  });

  it('a dial the egress policy refused is a 502 unreachable naming why', () => {
    const denied = Object.assign(new Error('internal.example resolves to a private address'), {
      code: 'EGRESS_DENIED',
    });
    expect(classifyTransportError(denied)).toMatchObject({
      reason: 'unreachable',
      status: 502,
      message: 'The upstream was not dialed: internal.example resolves to a private address.',
    });
  });
});

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { UpstreamError } from '@sbc/dialects';
import { createEgressPolicy } from '@sbc/egress';
import { rejectionOf } from '@sbc/testing';
import type { Engine } from '../routing/engines';
import { createUpstreamClient, type UpstreamClient } from './client';

const EGRESS = createEgressPolicy({ privateEgress: 'operators' });
const OPTIONS = {
  connectTimeoutMs: 1_000,
  headersTimeoutMs: 5_000,
  bodyTimeoutMs: 5_000,
  idleTimeoutMs: 5_000,
  connectionsPerOrigin: 8,
  queueLimit: 64,
};
const FIXTURES = path.join(__dirname, '__fixtures__');

function engineAt(baseUrl: string, dialAs?: Engine['dialAs']): Engine {
  return {
    dialect: 'openai',
    baseUrl,
    apiKey: 'k',
    model: 'm',
    headers: {},
    label: 'test',
    ...(dialAs ? { dialAs } : {}),
  };
}

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('upstream pools: capacity and overload', () => {
  let client: UpstreamClient | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  it(
    'with every connection busy and the wait queue full, the next call is refused at once; queued calls go through ' +
      'when a connection frees',
    async () => {
      // Each request is held open (a stream that has not ended) until the test lets it go.
      const held: ServerResponse[] = [];
      const server = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {}\n\n');
        held.push(res);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const waits: number[] = [];
      let refused = 0;
      client = createUpstreamClient({ ...OPTIONS, connectionsPerOrigin: 2, queueLimit: 2 }, EGRESS);
      client.observe({ waited: (seconds) => waits.push(seconds), refused: () => (refused += 1) });
      const send = () => client!.send({ engine: engineAt(baseUrl), path: '/chat/completions', body: '{}' });
      try {
        const running = [send(), send()];
        await Promise.all(running.map((call) => call.head));
        const queued = [send(), send()];
        expect(client.stats()).toEqual({ queued: 2, inFlight: 4 });

        const startedAt = performance.now();
        const error = await rejectionOf(send().head);
        expect(error).toBeInstanceOf(UpstreamError);
        expect((error as UpstreamError).reason).toBe('overloaded');
        expect((error as UpstreamError).status).toBe(503);
        expect(performance.now() - startedAt).toBeLessThan(50);
        expect(refused).toBe(1);

        // Ending the running streams frees their connections for the queued calls.
        for (const res of held.splice(0)) res.end('data: [DONE]\n\n');
        await Promise.all(queued.map((call) => call.head));
        expect(queued.map((call) => call.status)).toEqual([200, 200]);
        expect(waits.length).toBe(4);
        for (const res of held.splice(0)) res.end();
        await until('every call finished', () => client!.stats().inFlight === 0);
        expect(client.stats().queued).toBe(0);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    },
  );

  it.each([
    ['the operator', undefined],
    ['an egress-guarded caller', 'operator' as const],
  ])('an upstream offering HTTP/2 over TLS carries many calls on one connection (%s)', async (_who, dialAs) => {
    const cert = readFileSync(path.join(FIXTURES, 'localhost-cert.pem'));
    const key = readFileSync(path.join(FIXTURES, 'localhost-key.pem'));
    const held: Http2ServerResponse[] = [];
    let sessions = 0;
    const server = createSecureServer({ key, cert, allowHTTP1: true }, (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"protocol":"${req.httpVersion}"}\n\n`);
      held.push(res);
    });
    server.on('session', () => (sessions += 1));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const baseUrl = `https://localhost:${(server.address() as AddressInfo).port}/v1`;
    client = createUpstreamClient({ ...OPTIONS, connectionsPerOrigin: 4, tls: { ca: cert } }, EGRESS);
    try {
      // Four HTTP/1.1 connections would stream four of these at once and hold the rest in the queue.
      const calls = Array.from({ length: 60 }, () =>
        client!.send({ engine: engineAt(baseUrl, dialAs), path: '/chat/completions', body: '{}' }),
      );
      await Promise.all(calls.map((call) => call.head));
      await Promise.all(calls.map((call) => call.firstData()));
      expect(calls.every((call) => call.status === 200)).toBe(true);
      const first = await new Promise<string>((resolve) =>
        calls[0]!.attach({ data: (chunk) => resolve(chunk.toString()), end: () => undefined, error: () => undefined }),
      );
      expect(first).toContain('"protocol":"2.0"');
      // The burst may open every allowed connection before the first has negotiated; no more than that.
      expect(sessions).toBeLessThanOrEqual(4);
      for (const res of held.splice(0)) res.end();
      await until('every call finished', () => client!.stats().inFlight === 0);
    } finally {
      await client.close();
      client = undefined;
      server.close();
    }
  });

  it(
    'a thousand calls arriving in bursts over HTTP/2 all reach the upstream at once: none waits behind a full ' +
      'connection',
    async () => {
      // undici's Client can announce room it no longer has (a drain queued while it had room, emitted after it
      // filled again); its Pool then hands it the next call, which waits behind 100 running streams until one
      // ends. Streams here never end, so such a call would never start.
      const cert = readFileSync(path.join(FIXTURES, 'localhost-cert.pem'));
      const key = readFileSync(path.join(FIXTURES, 'localhost-key.pem'));
      const held: Http2ServerResponse[] = [];
      let closing = false;
      const server = createSecureServer({ key, cert }, (req, res) => {
        req.resume();
        if (closing) return void res.end();
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {}\n\n');
        held.push(res);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const baseUrl = `https://localhost:${(server.address() as AddressInfo).port}/v1`;
      // The defaults' pool and queue, and timeouts longer than the test, so nothing frees a connection early.
      // The first burst dials a TLS connection per call before any has negotiated HTTP/2, which on a busy
      // machine takes seconds: a connect timeout that failed those calls would read as calls held back.
      client = createUpstreamClient(
        {
          ...OPTIONS,
          connectTimeoutMs: 15_000,
          headersTimeoutMs: 60_000,
          bodyTimeoutMs: 60_000,
          connectionsPerOrigin: 10_000,
          queueLimit: 1_000,
          tls: { ca: cert },
        },
        EGRESS,
      );
      try {
        const calls = [];
        for (let burst = 0; burst < 10; burst++) {
          for (let i = 0; i < 100; i++)
            calls.push(client.send({ engine: engineAt(baseUrl), path: '/chat/completions', body: '{}' }));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        // A call held behind a full connection never arrives while these streams run, however long this waits.
        await until('the upstream holds every call', () => held.length === calls.length, 15_000);
        expect(client.stats()).toEqual({ queued: 0, inFlight: 1_000 });
        for (const res of held.splice(0)) res.end();
        await Promise.all(calls.map((call) => call.head));
        await until('every call finished', () => client!.stats().inFlight === 0);
      } finally {
        closing = true;
        for (const res of held.splice(0)) res.end();
        await client.close();
        client = undefined;
        server.close();
      }
    },
  );
});

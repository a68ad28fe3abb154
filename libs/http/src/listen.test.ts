import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { healthRoutes } from './health';
import { listen, type RenderClientError } from './listen';

describe('listen', () => {
  it('binds port 0 to a real port and reports its URL', async () => {
    const server = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    try {
      expect(server.port).toBeGreaterThan(0);
      expect(await (await fetch(server.url)).text()).toBe('ok');
    } finally {
      await server.close();
    }
  });

  it('close lets an in-flight request finish, and refuses new connections', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = await listen(
      (_req, res) => {
        void released.then(() => res.end('finished'));
      },
      { host: '127.0.0.1', port: 0 },
    );
    const inflight = fetch(server.url).then((res) => res.text());
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = server.close(5_000);
    await expect(fetch(server.url)).rejects.toThrow();
    release();
    expect(await inflight).toBe('finished');
    await closing;
  });

  it('close cuts what is still running after the drain time', async () => {
    const server = await listen(() => undefined /* never answers */, { host: '127.0.0.1', port: 0 });
    const inflight = fetch(server.url).then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await server.close(100);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await inflight).toBe('cut');
  });
});

/** A raw connection, to send exactly what a test needs and read everything the server writes. */
async function rawConnection(url: string) {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  socket.on('error', () => undefined);
  return { socket, received: () => received, closed };
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const render: RenderClientError = (status, res) => ({
  headers: { 'x-request-id': String(res?.getHeader('x-request-id') ?? 'fresh') },
  body: `refused ${status}`,
});

describe('listen: caller limits', () => {
  it('a body that stops arriving is answered 408 in the rendered words once the request time is up', async () => {
    const server = await listen(
      (req, res) => {
        res.setHeader('x-request-id', 'req_partial');
        req.on('data', () => undefined);
      },
      {
        host: '127.0.0.1',
        port: 0,
        limits: { headersTimeoutMs: 200, requestTimeoutMs: 300 },
        renderClientError: render,
      },
    );
    try {
      const caller = await rawConnection(server.url);
      const started = Date.now();
      caller.socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"partial":');
      const answer = await caller.closed;
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(answer).toMatch(/^HTTP\/1.1 408 Request Timeout\r\n/);
      expect(answer).toContain('x-request-id: req_partial');
      expect(answer).toContain('connection: close');
      expect(answer.endsWith('refused 408')).toBe(true);
    } finally {
      await server.close(0);
    }
  });

  it('headers over the size limit are answered 431 in the rendered words', async () => {
    const server = await listen((_req, res) => res.end('ok'), {
      host: '127.0.0.1',
      port: 0,
      limits: { maxHeaderBytes: 8 * 1024 },
      renderClientError: render,
    });
    try {
      const caller = await rawConnection(server.url);
      caller.socket.write(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const answer = await caller.closed;
      expect(answer).toMatch(/^HTTP\/1.1 431 /);
      expect(answer).toContain('x-request-id: fresh');
      expect(answer.endsWith('refused 431')).toBe(true);
    } finally {
      await server.close(0);
    }
  });

  it('an answer streams on past the request time: that bounds receiving the request, not answering it', async () => {
    const server = await listen(
      (_req, res) => {
        res.write('start ');
        setTimeout(() => res.end('end'), 700);
      },
      { host: '127.0.0.1', port: 0, limits: { headersTimeoutMs: 100, requestTimeoutMs: 200 } },
    );
    try {
      expect(await (await fetch(server.url)).text()).toBe('start end');
    } finally {
      await server.close(0);
    }
  });

  it(
    'a kept-alive socket idle past the header time still serves ' +
      'its next request (the keep-alive time bounds idling)',
    async () => {
      const server = await listen((req, res) => res.end(`ok ${req.url}`), {
        host: '127.0.0.1',
        port: 0,
        limits: { headersTimeoutMs: 100, requestTimeoutMs: 200, keepAliveTimeoutMs: 5_000 },
      });
      try {
        const caller = await rawConnection(server.url);
        caller.socket.write('GET /first HTTP/1.1\r\nhost: x\r\n\r\n');
        await until(() => caller.received().includes('ok /first'));
        await new Promise((resolve) => setTimeout(resolve, 600));
        caller.socket.write('GET /second HTTP/1.1\r\nhost: x\r\n\r\n');
        await until(() => caller.received().includes('ok /second'));
        caller.socket.destroy();
      } finally {
        await server.close(0);
      }
    },
  );
});

describe('listen: draining', () => {
  it('a kept-alive caller is told connection: close on its next request, and its socket then closes', async () => {
    const server = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    const caller = await rawConnection(server.url);
    caller.socket.write('GET /first HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => caller.received().includes('ok'));
    expect(caller.received().toLowerCase()).toContain('connection: keep-alive');
    // The request is already on its way when the drain begins; a kept-alive socket carrying one is not idle.
    caller.socket.write('GET /second HTTP/1.1\r\nhost: x\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = server.close(5_000);
    caller.socket.write('\r\n');
    const answer = await caller.closed;
    const second = answer.slice(answer.lastIndexOf('HTTP/1.1'));
    expect(second).toMatch(/^HTTP\/1.1 200/);
    expect(second.toLowerCase()).toContain('connection: close');
    await closing;
  });

  it('a connection that has sent nothing yet is closed at once and does not hold the drain open', async () => {
    const server = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    const spare = await rawConnection(server.url);
    const started = Date.now();
    await server.close(5_000);
    await spare.closed;
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a kept-alive answer already under way when the drain begins closes its socket once it ends', async () => {
    let finish!: () => void;
    const server = await listen(
      (_req, res) => {
        res.write('streaming ');
        finish = () => res.end('done');
      },
      { host: '127.0.0.1', port: 0 },
    );
    const caller = await rawConnection(server.url);
    caller.socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => caller.received().includes('streaming'));
    const closing = server.close(5_000);
    finish();
    expect(await caller.closed).toContain('done');
    await closing;
  });

  it(
    'at the deadline, answers still running are asked to ' + 'end in their own words before what is left is cut',
    async () => {
      const running = new Set<ServerResponse>();
      const server = await listen(
        (_req, res) => {
          running.add(res);
          res.write('event: token\n\n');
        },
        { host: '127.0.0.1', port: 0 },
      );
      const caller = await rawConnection(server.url);
      caller.socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      await until(() => caller.received().includes('token'));
      const started = Date.now();
      await server.close(200, {
        onDeadline: () => {
          for (const res of running) res.end('event: error\n\n');
        },
      });
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(await caller.closed).toContain('event: error');
    },
  );
});

describe('health routes', () => {
  it(
    'healthz answers while alive; readyz follows the ' + 'ready check, and a failing check reads as not ready',
    async () => {
      let ready: boolean | Error = true;
      const app = express().use(
        healthRoutes(() => {
          if (ready instanceof Error) throw ready;
          return ready;
        }),
      );
      const server = await listen(app, { host: '127.0.0.1', port: 0 });
      try {
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
        expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
        ready = false;
        expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
        ready = new Error('probe failed');
        expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      } finally {
        await server.close();
      }
    },
  );
});

describe('readiness detail', () => {
  it('adds what is degraded to the readiness body without changing its status', async () => {
    const app = express().use(
      healthRoutes(
        () => true,
        () => ({ house_engines_unreachable: [{ model: 'house' }] }),
      ),
    );
    const server = await listen(app, { host: '127.0.0.1', port: 0 });
    try {
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', house_engines_unreachable: [{ model: 'house' }] });
    } finally {
      await server.close();
    }
  });
});

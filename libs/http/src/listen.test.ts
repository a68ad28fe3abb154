import express from 'express';
import { healthRoutes } from './health';
import { listen } from './listen';

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

describe('health routes', () => {
  it('healthz answers while alive; readyz follows the ready check, and a failing check reads as not ready', async () => {
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
  });
});

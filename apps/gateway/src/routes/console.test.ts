import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { CONSOLE_CSP, consoleRoutes } from './console';

describe('serving the console at /console/', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'console-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(
      path.join(dir, 'index.html'),
      '<!doctype html><title>Console</title><script type="module" src="/console/assets/index-AbC123.js"></script>',
    );
    writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
    const app = express();
    app.use(consoleRoutes({ consoleDir: dir, baseUrl: 'https://gw.example.com/"x"/' }));
    app.use((_req, res) => void res.status(404).json({ error: 'not_found' }));
    app.use(
      (error: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) =>
        void res.status(error.status ?? 500).json({ error: 'refused' }),
    );
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('answers the app page with a strict CSP (no inline script) and no-cache', async () => {
    const res = await fetch(`${base}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it("names the edge's BASE_URL in the page, as an escaped attribute", async () => {
    const page = await (await fetch(`${base}/console/keys`)).text();
    expect(page).toContain('<meta name="sbc-base-url" content="https://gw.example.com/&quot;x&quot;">');
  });

  it('answers every other /console/ path with the same app page, which routes in the browser', async () => {
    for (const page of ['/console/keys', '/console/usage/', '/console/device?user_code=ABCD-EFGH']) {
      const res = await fetch(`${base}${page}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<title>Console</title>');
    }
    const bare = await fetch(`${base}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/console/');
  });

  it('serves hashed assets as immutable for a year, and a missing one as 404, never the app page', async () => {
    const asset = await fetch(`${base}/console/assets/index-AbC123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    const missing = await fetch(`${base}/console/assets/index-gone.js`);
    expect(missing.status).toBe(404);
  });

  it("sends the pairing flow's verification URI (/device) to the activation page with its user_code", async () => {
    const res = await fetch(`${base}/device?user_code=ABCD-EFGH`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/console/device?user_code=ABCD-EFGH');
  });
});

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { ROUTES } from '@sbc/api';
import { errorCodes } from '@sbc/errors';
import { CHROMIUM, launchChromium } from '../support/browser';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

// The developer docs as a developer meets them: every doc_url the service hands out lands on an anchor of
// /developers, the API reference lists every documented operation, and the page passes axe in Chromium.

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const ARTIFACTS = path.resolve(__dirname, '../../../dist/test-artifacts/developers');

/** Every `doc_url` string anywhere in a JSON body. */
function docUrlsIn(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) value.forEach((v) => docUrlsIn(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'doc_url' && typeof inner === 'string') found.add(inner);
      else docUrlsIn(inner, found);
    }
  }
}

function anchorIds(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!));
}

describe('developer docs at /developers', () => {
  let stack: AccountSurfaceStack;
  let guide: string;
  beforeAll(async () => {
    stack = await startStack({ label: 'developer_docs' });
    guide = await (await fetch(`${stack.edge.url}/developers`)).text();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it(
    'is served with the console CSP (only its own origin, ' + 'no inline script or style) and an external stylesheet',
    async () => {
      for (const path of ['/developers', '/developers/api']) {
        const res = await fetch(`${stack.edge.url}${path}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp).toContain("script-src 'self'");
        expect(csp).toContain("style-src 'self'");
        expect(csp).not.toMatch(/unsafe-|https?:/);
        const html = await res.text();
        expect(html).not.toMatch(/<script|\sstyle=|<style/);
        expect(html).toContain('<link rel="stylesheet" href="/developers/developers.css">');
      }
      const css = await fetch(`${stack.edge.url}/developers/developers.css`);
      expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    },
  );

  it(
    'has an entry for every code in the error registry, with ' +
      'its status, meaning, what to do and whether a retry helps',
    () => {
      const ids = anchorIds(guide);
      expect(errorCodes.filter((code) => !ids.has(`errors-${code}`))).toEqual([]);
      const entry = guide.slice(guide.indexOf('id="errors-rate_limited"'));
      expect(entry.slice(0, entry.indexOf('</section>'))).toMatch(
        /HTTP 429[\s\S]*Meaning[\s\S]*What to do[\s\S]*Retry helps<\/dt><dd>Yes/,
      );
    },
  );

  it('shows the error shapes of both model-call dialects', () => {
    expect(guide).toContain('id="shape-openai"');
    expect(guide).toContain('id="shape-anthropic"');
    expect(guide).toContain('&quot;type&quot;: &quot;error&quot;');
  });

  it('every doc_url in the refusals of a sweep across routes lands on an anchor that exists on the page', async () => {
    const found = new Set<string>();
    const limited = await stack.seedKey({ scopes: [] });
    const record = async (method: string, path: string, init: { key?: string; body?: string } = {}) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (init.key) headers.authorization = `Bearer ${init.key}`;
      const res = await fetch(`${stack.edge.url}${path}`, {
        method,
        headers,
        body: method === 'GET' ? undefined : (init.body ?? '{}'),
      });
      const text = res.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await res.text();
      if (res.status >= 400 && text.startsWith('{')) docUrlsIn(JSON.parse(text), found);
    };
    for (const route of ROUTES) {
      const path = route.path.replace(/\{[^}]+\}/g, 'nope');
      const method = route.method.toUpperCase();
      await record(method, path);
      await record(method, path, { key: limited.secret });
      await record(method, path, { key: OWNER_KEY, body: '{"unexpected": [1, 2' });
    }
    await record('GET', '/v1/nowhere', { key: OWNER_KEY });
    await record('GET', '/v1/keys?limit=1000', { key: OWNER_KEY });
    await record('POST', '/v1/chat/completions', {
      key: OWNER_KEY,
      body: '{"model": "no-such-model", "messages": []}',
    });

    const codes = [...found].map((url) => new URL(url).hash.replace('#errors-', ''));
    expect(codes).toEqual(
      expect.arrayContaining(['unauthorized', 'insufficient_scope', 'invalid_request', 'not_found']),
    );
    const ids = anchorIds(guide);
    const dead = [...found].filter((url) => {
      const parsed = new URL(url);
      return parsed.origin !== 'https://gw.test' || parsed.pathname !== '/developers' || !ids.has(parsed.hash.slice(1));
    });
    expect(dead).toEqual([]);
  }, 60_000);

  it('the API reference lists every operation of /docs/openapi.json with its scopes', async () => {
    const document = (await (await fetch(`${stack.edge.url}/docs/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId?: string; 'x-required-scopes'?: string[] }>>;
    };
    const html = await (await fetch(`${stack.edge.url}/developers/api`)).text();
    const ids = anchorIds(html);
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const id = `op-${op.operationId}`;
        if (!ids.has(id)) missing.push(`${method} ${path}`);
        const section = html.slice(html.indexOf(`id="${id}"`), html.indexOf('</section>', html.indexOf(`id="${id}"`)));
        for (const scope of op['x-required-scopes'] ?? [])
          if (!section.includes(`<code>${scope}</code>`)) missing.push(`${method} ${path} scope ${scope}`);
      }
    }
    expect(missing).toEqual([]);
    expect(html).toContain('href="/developers#errors-insufficient_scope"');
  });

  it('GET / sends a browser to the console and gives an API client an index of where things are', async () => {
    const browser = await fetch(`${stack.edge.url}/`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      redirect: 'manual',
    });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/console/');
    for (const accept of ['application/json', '*/*']) {
      const client = await fetch(`${stack.edge.url}/`, { headers: { accept } });
      expect(client.status).toBe(200);
      expect(client.headers.get('vary')).toMatch(/accept/i);
      expect(await client.json()).toMatchObject({
        docs: 'https://gw.test/developers',
        openapi: 'https://gw.test/docs/openapi.json',
        console: 'https://gw.test/console/',
        health: 'https://gw.test/healthz',
      });
    }
  });

  describe('in headless Chromium', () => {
    let browser: Browser | undefined;
    beforeAll(async () => {
      if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
      browser = await launchChromium();
    }, 30_000);
    afterAll(async () => {
      await browser?.close();
    });

    it.each(['/developers', '/developers/api'])(
      '%s has no serious or critical axe violation and breaks no CSP rule',
      async (path) => {
        const page = await browser!.newPage();
        const refused: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') refused.push(message.text());
        });
        await page.goto(`${stack.edge.url}${path}#errors-rate_limited`);
        // The stylesheet applied (the CSP let it in): the skip link is moved off screen.
        expect(await page.evaluate<string>("getComputedStyle(document.querySelector('.skip')).position")).toBe(
          'absolute',
        );
        // Evaluated through the DevTools protocol: the page's CSP refuses inline script tags.
        await page.evaluate(AXE);
        const found = await page.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
          'axe.run().then((result) => result.violations)',
        );
        const violations = found
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map(
            (v) =>
              `${v.id}: ${v.nodes
                .slice(0, 3)
                .map((n) => n.target.join(' '))
                .join(', ')}`,
          );
        expect(violations).toEqual([]);
        expect(refused).toEqual([]);
        await page.close();
      },
      60_000,
    );

    it('/developers#errors-rate_limited lands on its entry', async () => {
      const page = await browser!.newPage();
      await page.goto(`${stack.edge.url}/developers#errors-rate_limited`);
      expect(await page.evaluate<string>("document.querySelector(':target').id")).toBe('errors-rate_limited');
      expect(
        await page.evaluate<number>(
          "Math.round(document.getElementById('errors-rate_limited').getBoundingClientRect().top)",
        ),
      ).toBeLessThan(100);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'errors-rate_limited.png') });
      await page.goto(`${stack.edge.url}/developers`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'developers.png') });
      await page.goto(`${stack.edge.url}/developers/api#op-createKey`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'api-create-key.png') });
      await page.close();
    });
  });
});

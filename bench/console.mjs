// Console budget: the initial JavaScript a first visit downloads (gzipped), and how long the Usage page takes
// to draw 90 days × 20 models, in headless Chromium. The page is served from the console build with a
// stand-in API answering that breakdown, so the figure is the browser's work alone.
//
//   npx nx run console:build && node bench/console.mjs        (BENCH_RUNS=10 for more runs)
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist/apps/console');
const runs = Number(process.env.BENCH_RUNS ?? 5);
const DAYS = 90;
const MODELS = 20;
if (!existsSync(path.join(dist, 'index.html'))) {
  console.error('dist/apps/console is missing: run "npx nx run console:build" first');
  process.exit(2);
}

const index = readFileSync(path.join(dist, 'index.html'), 'utf8');
// What the first visit loads before any page chunk: the entry script and every module it preloads.
const initial = [
  ...index.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/console\/([^"]+\.js)"/g),
].map((m) => m[1]);
const gzipped = (file) => gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length;
const initialGz = initial.reduce((sum, file) => sum + gzipped(file), 0);
const css = [...index.matchAll(/href="\/console\/([^"]+\.css)"/g)].map((m) => m[1]);
const cssGz = css.reduce((sum, file) => sum + gzipped(file), 0);

function metrics(requests) {
  return {
    requests,
    tokens_in: requests * 900,
    tokens_out: requests * 300,
    cache_read: 0,
    cache_write: 0,
    tokens: requests * 2,
    usd: requests * 0.002,
    list_usd: requests * 0.002,
  };
}
function breakdown() {
  const start = Date.UTC(2026, 0, 1);
  const groups = Array.from({ length: MODELS }, (_, m) => ({
    ...metrics(DAYS * (m + 1)),
    id: `model-${m}`,
    label: `model-${m}`,
  }));
  const buckets = Array.from({ length: DAYS }, (_, d) => {
    const by = Object.fromEntries(groups.map((g, m) => [g.id, metrics(m + 1 + (d % 7))]));
    const requests = Object.values(by).reduce((sum, one) => sum + one.requests, 0);
    return {
      ...metrics(requests),
      key: new Date(start + d * 86_400_000).toISOString().slice(0, 10),
      start: new Date(start + d * 86_400_000).toISOString(),
      by,
    };
  });
  const total = buckets.reduce((sum, b) => sum + b.requests, 0);
  return {
    from: '2026-01-01',
    to: '2026-03-31',
    tz: 'UTC',
    bucket: 'day',
    group: 'model',
    totals: metrics(total),
    groups,
    buckets,
  };
}
const BREAKDOWN = JSON.stringify(breakdown());
const EMPTY_LIST = JSON.stringify({ object: 'list', data: [], has_more: false, first_id: null, last_id: null });

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const json = (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  if (url.pathname === '/v1/auth/console/session')
    return json(JSON.stringify({ object: 'console_session', user: { id: 'usr_bench' }, operator: false }));
  if (url.pathname === '/v1/usage/breakdown') return json(BREAKDOWN);
  if (url.pathname.startsWith('/v1/')) return json(EMPTY_LIST);
  const file = url.pathname.startsWith('/console/assets/')
    ? path.join(dist, url.pathname.slice('/console/'.length))
    : path.join(dist, 'index.html');
  const type = file.endsWith('.js') ? 'text/javascript' : file.endsWith('.css') ? 'text/css' : 'text/html';
  res.writeHead(200, { 'content-type': type }).end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--no-first-run',
  ],
});
const draws = [];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // The console asks who is signed in only when the edge's signed-in hint cookie says there is a session.
  await page.context().addCookies([{ name: 'sbc_signed_in', value: '1', url: base }]);
  for (let run = 0; run <= runs; run++) {
    await page.goto(`${base}/console/usage`);
    await page.getByText(/Chart total:/).waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => performance.getEntriesByName('usage-draw').length > 0);
    const ms = await page.evaluate(() => performance.getEntriesByName('usage-draw').at(-1)?.duration ?? NaN);
    // The first run warms the browser's caches and JIT; it is not counted.
    if (run > 0) draws.push(ms);
  }
} finally {
  await browser.close();
  server.close();
}
draws.sort((a, b) => a - b);
const median = draws[Math.floor(draws.length / 2)];
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(`initial JS (gzipped): ${kb(initialGz)} in ${initial.length} file(s) [budget 200 KB]; CSS ${kb(cssGz)}`);
console.log(
  `Usage page draw, ${DAYS} days x ${MODELS} models: ` +
    `median ${median.toFixed(1)} ms, worst ${draws.at(-1).toFixed(1)} ` +
    `ms over ${draws.length} runs [budget 200 ms]`,
);
process.exitCode = initialGz <= 200 * 1024 && median <= 200 ? 0 : 1;

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { createTestDatabase, freePort, jsonOf, type TestDatabase } from '@sbc/testing';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { loadEmbeddedConfig, start, type RunningEmbedded } from '@sbc/app-embedded';

// The console in a real browser: Debian's chromium, driven by playwright-core, against the embedded stack
// serving the built console (npm test builds it first). Screenshots of each page land in ARTIFACTS.
const ROOT = path.resolve(__dirname, '../../..');
const CONSOLE_BUILD = path.join(ROOT, 'dist/apps/console/index.html');
const ARTIFACTS = path.join(ROOT, 'dist/test-artifacts/console');
const CHROMIUM = '/usr/bin/chromium';
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'a console password 1';
const EMAIL = `person.${Date.now()}@example.test`;

/** Waits, as a person would, for a list to settle at `count` items; returns what it settled at. */
async function countSettles(locator: Locator, count: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  let seen = await locator.count();
  while (seen !== count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    seen = await locator.count();
  }
  return seen;
}

/** The UTC day `days` before today, as the Usage page's default window in a UTC browser. */
const utcDay = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

describe('the console in a browser', () => {
  let dataDir: string;
  const databases: TestDatabase[] = [];
  let running: RunningEmbedded;
  let sim: RunningSim;
  let browser: Browser;
  let page: Page;
  let base: string;
  let key = '';
  const keyName = 'ci laptop';

  beforeAll(async () => {
    if (!existsSync(CONSOLE_BUILD))
      throw new Error('dist/apps/console is missing: run "npx nx run console:build" first (npm test does)');
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    mkdirSync(ARTIFACTS, { recursive: true });
    dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-console-'));
    for (const service of ['account', 'usage', 'xbuilds', 'runs'])
      databases.push(await createTestDatabase(`console_${service}`));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    sim = await startSim(
      loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
    );
    const [account, usage, xbuilds, runs] = databases.map((db) => db.databaseUrl ?? '');
    running = await start(
      loadEmbeddedConfig({
        SBC_DATA_DIR: dataDir,
        PORT: String(port),
        BASE_URL: base,
        LOG_LEVEL: 'silent',
        // The endpoint added below is the simulator on loopback, which only operators may dial by default.
        EGRESS_PRIVATE: 'everyone',
        ...(account
          ? {
              ACCOUNT_DATABASE_URL: account,
              USAGE_LEDGER_DATABASE_URL: usage,
              X_BUILDS_DATABASE_URL: xbuilds,
              RUNS_DATABASE_URL: runs,
            }
          : {}),
        UPSTREAM_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      }),
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    const context = await browser.newContext({
      timezoneId: 'UTC',
      locale: 'en-GB',
      viewport: { width: 1280, height: 900 },
    });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await running?.stop();
    await sim?.stop();
    for (const db of databases) await db.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** axe-core on the page as it stands: no serious or critical violation. */
  async function accessible(name: string): Promise<void> {
    // Evaluated through the DevTools protocol: the console's CSP refuses inline script tags (addScriptTag). The
    // page's globals are reached through strings, as this file is compiled without the DOM types.
    if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE);
    const found = await page.evaluate<{ id: string; impact: string; nodes: { target: string[] }[] }[]>(
      'axe.run().then((result) => result.violations)',
    );
    const violations = found
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  async function open(label: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: label }).waitFor();
  }

  it('a person signs up, signs out and signs in again with email and password', async () => {
    await page.goto(`${base}/console/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await accessible('sign-in');
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The page never holds the session: the cookie is HttpOnly.
    expect(await page.evaluate<string>('document.cookie')).toBe('');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  });

  it(
    'mints a key whose secret is shown once, and calls ' + 'with it show in usage with totals equal to the API',
    async () => {
      await open('Keys');
      await page.getByRole('button', { name: 'Mint a key' }).click();
      const dialog = page.getByRole('dialog', { name: 'Mint a key' });
      await dialog.getByLabel('Name').fill(keyName);
      await dialog.getByLabel('Full access').check();
      await dialog.getByRole('button', { name: 'Mint key' }).click();
      key = await page.getByLabel('Secret key').inputValue();
      expect(key).toMatch(/^sbc_/);
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('cell', { name: keyName, exact: true }).waitFor();

      const openai = new OpenAI({ apiKey: key, baseURL: `${base}/v1` });
      const calls = 3;
      for (let i = 0; i < calls; i++)
        await openai.chat.completions.create({
          model: i === 2 ? 'house-fast' : 'house',
          messages: [{ role: 'user', content: `hello ${i}` }],
        });
      // The ledger applies usage events shortly after each reply: wait until the API counts every call.
      const window = `from=${utcDay(29)}&to=${utcDay(-1)}&tz=UTC&bucket=day&group=model`;
      let api: { totals: { requests: number; tokens_in: number; tokens_out: number } } = {
        totals: { requests: 0, tokens_in: 0, tokens_out: 0 },
      };
      for (let tries = 0; tries < 50 && api.totals.requests < calls; tries++) {
        api = await jsonOf(
          await fetch(`${base}/v1/usage/breakdown?${window}`, { headers: { authorization: `Bearer ${key}` } }),
        );
        if (api.totals.requests < calls) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(api.totals.requests).toBe(calls);

      await open('Usage');
      await page.getByLabel('Time zone').selectOption('UTC');
      const chartTotal = page.getByText(/Chart total:/);
      await chartTotal.waitFor();
      expect(await chartTotal.textContent()).toContain(`Chart total: ${calls} requests`);
      const totalRow = page.getByRole('row', { name: /^Total/ });
      expect((await totalRow.getByRole('cell').allTextContents()).slice(0, 3)).toEqual([
        String(api.totals.requests),
        api.totals.tokens_in.toLocaleString('en-US'),
        api.totals.tokens_out.toLocaleString('en-US'),
      ]);
      await page.getByLabel('Measure').selectOption('tokens');
      expect(await chartTotal.textContent()).toContain(
        `Chart total: ${(api.totals.tokens_in + api.totals.tokens_out).toLocaleString('en-US')} tokens`,
      );
      // The request log lists every call, with its latency.
      const log = page.getByRole('table', { name: 'Calls, newest first' });
      expect(await countSettles(log.getByRole('row'), calls + 1)).toBe(calls + 1);
      await page.getByLabel('Model', { exact: true }).fill('house-fast');
      expect(await countSettles(log.getByRole('row'), 2)).toBe(2);
      await page.getByLabel('Model', { exact: true }).fill('');
      expect(await countSettles(log.getByRole('row'), calls + 1)).toBe(calls + 1);
      // Each call names the target that served it and its attempts: house calls, answered at the first try.
      const headers = await log.getByRole('columnheader').allTextContents();
      const firstCall = await log.getByRole('row').nth(1).getByRole('cell').allTextContents();
      expect([firstCall[headers.indexOf('Served by')], firstCall[headers.indexOf('Attempts')]]).toEqual(['house', '1']);
      await accessible('usage');
      // On a phone the page does not scroll sideways: the log scrolls inside its own region.
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
        await page
          .getByRole('region', { name: 'Calls, newest first' })
          .getByText('house', { exact: true })
          .first()
          .scrollIntoViewIfNeeded();
        await accessible('usage-390');
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    },
  );

  it('adds an endpoint and shows its probe: the dialect it answered in and the models it lists', async () => {
    await open('Endpoints');
    const form = page.getByRole('form', { name: 'Add an endpoint' });
    await form.getByLabel('Label').fill('My simulator');
    await form.getByLabel('Base URL').fill(sim.url);
    await form.getByText(/0 is standby, used only when the others fail/).waitFor();
    await form.getByLabel('Weight').fill('3');
    await form.getByRole('button', { name: 'Add and probe' }).click();
    const probe = page.getByRole('status').filter({ hasText: 'Answered in the openai dialect' });
    await probe.waitFor();
    expect(await probe.textContent()).toMatch(/[1-9]\d* models found/);
    await page.getByRole('cell', { name: 'My simulator', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Re-probe My simulator' }).click();
    await probe.waitFor();
    const endpoints = page.getByRole('table', { name: 'Custom endpoints' });
    const weightOf = async () => {
      const headers = await endpoints.getByRole('columnheader').allTextContents();
      const row = endpoints.getByRole('row').filter({ hasText: 'My simulator' });
      return (await row.getByRole('cell').allTextContents())[headers.indexOf('Weight')];
    };
    expect(await weightOf()).toBe('3');
    await accessible('endpoints');

    await page.getByRole('button', { name: 'Edit My simulator' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit endpoint' });
    expect(await dialog.getByLabel('Weight').inputValue()).toBe('3');
    await dialog.getByLabel('Weight').fill('0');
    await dialog.getByRole('button', { name: 'Save and probe' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await endpoints.getByRole('cell', { name: '0 (standby)', exact: true }).waitFor();
    expect(await weightOf()).toBe('0 (standby)');
  });

  it("approves a device code at the pairing flow's verification URI, and the device gets its token", async () => {
    const pairing = await jsonOf(
      await fetch(`${base}/v1/devices/pair`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'cli', label: 'build box', fingerprint: 'fp-console-test' }),
      }),
    );
    expect(pairing.verification_uri).toBe(`${base}/device`);
    await page.goto(pairing.verification_uri_complete);
    await page.getByRole('heading', { level: 1, name: 'Device activation' }).waitFor();
    expect(await page.getByLabel('Code shown on the device').inputValue()).toBe(pairing.user_code);
    await accessible('device');
    await page.getByRole('button', { name: 'Approve' }).click();
    expect(await page.getByRole('status').filter({ hasText: 'Approved' }).textContent()).toContain('build box');
    const token = await fetch(`${base}/v1/devices/pair/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code: pairing.device_code }),
    });
    expect(token.status).toBe(200);
    expect((await jsonOf(token)).device_token).toMatch(/^sbd_/);
  });

  it('every other page passes axe with no serious or critical violation', async () => {
    for (const label of ['Overview', 'Credits and plan', 'Spend', 'Aliases']) {
      await open(label);
      await page
        .getByRole('status')
        .filter({ hasText: /^Loading/ })
        .first()
        .waitFor({ state: 'detached' });
      await accessible(label.toLowerCase().replace(/ /g, '-'));
    }
  });

  it('revokes a key after a confirmation, and the key is refused from then on', async () => {
    await open('Keys');
    await accessible('keys');
    await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('cell', { name: /^Revoked/ }).waitFor();
    const refused = await fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${key}` } });
    expect([401, 403]).toContain(refused.status);
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import pg from 'pg';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { agentSetup, KEY_PLACEHOLDER, shellSnippet } from '@sbc/agent-setup';
import { freePort, jsonOf, type TestDatabase } from '@sbc/testing';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { loadEmbeddedConfig, start, type RunningEmbedded } from '@sbc/app-embedded';
import { EVERYTHING_SERVER, startEverythingServer } from '../support/mcp-everything';
import {
  collectPageErrors,
  DESKTOP,
  embeddedDatabases,
  expectAccessible,
  launchChromium,
  requireConsoleBrowser,
} from '../support/browser';

// The console in a real browser: Debian's chromium, driven by playwright-core, against the embedded stack
// serving the built console (npm test builds it first). Screenshots of each page land in ARTIFACTS.
const PASSWORD = 'a console password 1';
const EMAIL = `person.${Date.now()}@example.test`;
const INVITEE = `invitee.${Date.now()}@example.test`;
const STRANGER = `stranger.${Date.now()}@example.test`;
const OPERATOR = `operator.${Date.now()}@example.test`;

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

/** The request log's newest call, one cell by its column's header. */
async function newestCall(log: Locator): Promise<(header: string) => string | undefined> {
  const headers = await log.getByRole('columnheader').allTextContents();
  const cells = await log.getByRole('row').nth(1).getByRole('cell').allTextContents();
  return (header) => cells[headers.indexOf(header)];
}

/** Opens the newest call's details (`title`: the dialog's name); `fact` reads one of its entries. */
async function openNewestCall(page: Page, log: Locator, title = 'Call details') {
  await log
    .getByRole('row')
    .nth(1)
    .getByRole('button', { name: /^Details of the call at/ })
    .click();
  const detail = page.getByRole('dialog', { name: title });
  const fact = (label: string) => detail.locator(`dt:text-is("${label}") + dd`).textContent();
  return { detail, fact };
}

/** Waits until `holds` is true of the newest usage rows the API lists (the ledger applies events just after). */
async function untilUsage(
  base: string,
  key: string,
  holds: (rows: { request_id: string; served_by: string }[]) => boolean,
): Promise<void> {
  for (let tries = 0; tries < 50; tries++) {
    const page = await jsonOf(
      await fetch(`${base}/v1/usage/requests?limit=25`, { headers: { authorization: `Bearer ${key}` } }),
    );
    if (holds(page.data)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the usage rows never showed up');
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
  /** The same edge by another host name: BASE_URL names it, so the pairing flow's links lead there. */
  let otherHost: string;
  /** Errors the signed-in person's page logged: there must be none (a refused request logs one). */
  const consoleErrors: string[] = [];
  let key = '';
  const keyName = 'ci laptop';
  let operatorId = '';

  beforeAll(async () => {
    requireConsoleBrowser();
    dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-console-'));
    const created = await embeddedDatabases('console');
    databases.push(...created.databases);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    otherHost = `http://localhost:${port}`;
    sim = await startSim(
      loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
    );
    const startEmbedded = (operatorIds: string) =>
      start(
        loadEmbeddedConfig({
          SBC_DATA_DIR: dataDir,
          PORT: String(port),
          BASE_URL: otherHost,
          LOG_LEVEL: 'silent',
          // The endpoint added below is the simulator on loopback, which only operators may dial by default.
          EGRESS_PRIVATE: 'everyone',
          ...created.env,
          UPSTREAM_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
          // One retry, soon: a refused webhook delivery has failed (and can be resent) within seconds.
          RUNS_WEBHOOK_RETRY_SCHEDULE_MS: '200',
          X_BUILDS_ADMIN_USER_IDS: operatorIds,
        }),
      );
    // An operator is named by user id, known only once the person has signed up: sign them up, then start
    // again naming them (the data stays), as an operator running the service does.
    running = await startEmbedded('');
    operatorId = await signUpByApi(OPERATOR);
    await running.stop();
    running = await startEmbedded(operatorId);
    browser = await launchChromium();
    page = await newPage();
    collectPageErrors(page, consoleErrors);
  }, 120_000);

  /** A browser of its own (cookies, storage), as a second person on another machine has. */
  async function newPage(): Promise<Page> {
    const context: BrowserContext = await browser.newContext({
      timezoneId: 'UTC',
      locale: 'en-GB',
      viewport: DESKTOP,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const opened = await context.newPage();
    opened.setDefaultTimeout(10_000);
    return opened;
  }

  async function signIn(on: Page, email: string): Promise<void> {
    await on.getByRole('heading', { name: 'Sign in' }).waitFor();
    await on.getByLabel('Email').fill(email);
    await on.getByLabel('Password').fill(PASSWORD);
    await on.getByRole('button', { name: 'Sign in' }).click();
  }

  /** Signs a person up through the API; returns their user id. */
  async function signUpByApi(email: string): Promise<string> {
    const response = await fetch(`${base}/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(response.status).toBe(201);
    return ((await jsonOf(response)) as { user: { id: string } }).user.id;
  }

  afterAll(async () => {
    await browser?.close();
    await running?.stop();
    await sim?.stop();
    for (const db of databases) await db.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** The accessibility check of every console page (support/browser.ts), on the signed-in page by default. */
  const accessible = (name: string, on: Page = page) => expectAccessible(on, name);

  async function open(label: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: label }).waitFor();
  }

  it('a person signs up, signs out and signs in again with email and password', async () => {
    await page.goto(`${base}/console/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await accessible('sign-in');
    // Signed out, the console asks nothing it would be refused (each refusal logs an error in the browser).
    expect(consoleErrors).toEqual([]);
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The page never holds the session: the cookie is HttpOnly; all it may read is that it signed in.
    expect(await page.evaluate<string>('document.cookie')).toBe('sbc_signed_in=1');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }, 90_000);

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
      // While the secret is shown, each coding agent's setup is copied with it, aimed at BASE_URL (another host
      // name than the page's own).
      const agents = page.getByRole('region', { name: 'Use this key with a coding agent' });
      for (const [label, agent] of [
        ['Claude Code', 'claude-code'],
        ['Codex', 'codex'],
        ['opencode', 'opencode'],
      ] as const) {
        await agents.getByRole('button', { name: `Copy for ${label}` }).click();
        await agents
          .getByRole('status')
          .filter({ hasText: `Copied the ${label} setup` })
          .waitFor();
        expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(
          shellSnippet(agentSetup(agent, { baseUrl: otherHost, apiKey: key, model: 'house' })),
        );
      }
      await accessible('keys-minted');
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
      const firstCall = await newestCall(log);
      expect([firstCall('Served by'), firstCall('Attempts')]).toEqual(['house', '1']);
      // A call's time opens it in full: what the row says, and what it has no column for.
      const { detail, fact } = await openNewestCall(page, log);
      expect({
        servedBy: await fact('Served by'),
        attempts: await fact('Attempts'),
        status: await fact('Status'),
        tokensOut: await fact('Tokens out'),
      }).toEqual({
        servedBy: 'house',
        attempts: '1',
        status: '200',
        tokensOut: firstCall('Tokens out'),
      });
      expect(await fact('Request id')).toMatch(/\S/);
      await detail.getByRole('button', { name: 'Close' }).click();
      await detail.waitFor({ state: 'hidden' });
      await accessible('usage');
      // On a phone the page does not scroll sideways: the log scrolls inside its own region.
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        // The charts size themselves to their box when a resize is observed, a frame or more after the viewport.
        const pageWidth = () => page.evaluate<number>('document.documentElement.scrollWidth');
        for (const deadline = Date.now() + 5_000; (await pageWidth()) > 390 && Date.now() < deadline;)
          await page.waitForTimeout(100);
        expect(await pageWidth()).toBeLessThanOrEqual(390);
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
    90_000,
  );

  it('sets the response cache in the key edit form; a repeated call shows as a hit in the request log', async () => {
    await open('Keys');
    await page.getByRole('button', { name: `Edit ${keyName}` }).click();
    const dialog = page.getByRole('dialog', { name: `Edit ${keyName}` });
    await dialog.getByLabel('Keep replies for (seconds; blank for no cache)').fill('300');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('cell', { name: '300 s', exact: true }).waitFor();

    // The edge's cached copy of the key follows the edit: the same call is kept once it does, then replayed.
    const openai = new OpenAI({ apiKey: key, baseURL: `${base}/v1` });
    const body = { model: 'house', messages: [{ role: 'user' as const, content: 'cached in the console test' }] };
    let cache: string | null = null;
    for (let tries = 0; tries < 60 && cache !== 'hit'; tries++) {
      cache = (await openai.chat.completions.create(body).withResponse()).response.headers.get('x-sbc-cache');
      if (cache !== 'hit') await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(cache).toBe('hit');

    // The ledger applies the hit's usage event shortly after the reply: wait until the API lists it.
    const newestHit = async () =>
      (await jsonOf(await fetch(`${base}/v1/usage/requests?limit=1`, { headers: { authorization: `Bearer ${key}` } })))
        .data[0]?.cache_hit === true;
    for (let tries = 0; tries < 50 && !(await newestHit()); tries++)
      await new Promise((resolve) => setTimeout(resolve, 200));
    // A fresh page: the console keeps a list it fetched for 15 s (the earlier test's log, without this call).
    await page.reload();
    await open('Usage');
    const log = page.getByRole('table', { name: 'Calls, newest first' });
    await log.getByRole('row').nth(1).waitFor();
    expect((await newestCall(log))('Cache')).toBe('Hit');
    const { detail, fact } = await openNewestCall(page, log);
    expect(await fact('Response cache')).toBe('Hit: replayed, not charged');
    expect(await fact('Credits charged')).toBe('0');
    await detail.getByRole('button', { name: 'Close' }).click();
  }, 90_000);

  it('a guardrail: created, tried on a sample, attached to a key, and its block shown in the request log', async () => {
    await open('Guardrails');
    const create = page.getByRole('form', { name: 'Create a guardrail' });
    await create.getByLabel('Name').fill('No Orion');
    await create.getByLabel('card', { exact: true }).check();
    await create.getByLabel('Words (comma-separated)').fill('orion');
    await create.getByRole('button', { name: 'Create guardrail' }).click();
    await page
      .getByRole('table', { name: 'Guardrails' })
      .getByRole('cell', { name: 'No Orion', exact: true })
      .waitFor();

    // The sample goes through the same detectors a call's text does: the card is redacted, the word blocks.
    const trial = page.getByRole('form', { name: 'Test a guardrail' });
    await trial.getByLabel('Sample text').fill('pay with 4111 1111 1111 1111');
    await trial.getByRole('button', { name: 'Test' }).click();
    const result = page.getByRole('status', { name: 'Test result' });
    await result.getByText('[REDACTED:card]').waitFor();
    await trial.getByLabel('Sample text').fill('tell me about Orion');
    await trial.getByRole('button', { name: 'Test' }).click();
    await result.getByText(/^Blocked \(by the words detector\)/).waitFor();
    await accessible('guardrails');

    const attach = page.getByRole('form', { name: 'Attach to a key' });
    await attach.getByLabel('Key').selectOption({ label: keyName });
    await attach.getByLabel('No Orion').check();
    await attach.getByRole('button', { name: "Save the key's guardrails" }).click();
    await page.getByRole('button', { name: "Save the key's guardrails" }).isEnabled();

    // The edge drops its cached copy of the key on the change: the next calls meet the guardrail.
    const openai = new OpenAI({ apiKey: key, baseURL: `${base}/v1` });
    let status = 200;
    for (let tries = 0; tries < 40 && status !== 400; tries++) {
      status = await openai.chat.completions
        .create({ model: 'house', messages: [{ role: 'user', content: 'tell me about Orion' }] })
        .then(
          () => 200,
          (error: unknown) => (error instanceof OpenAI.APIError ? (error.status ?? 0) : 0),
        );
      if (status !== 400) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(400);
    const newestBlocked = async () =>
      (await jsonOf(await fetch(`${base}/v1/usage/requests?limit=1`, { headers: { authorization: `Bearer ${key}` } })))
        .data[0]?.guardrail?.action === 'block';
    for (let tries = 0; tries < 50 && !(await newestBlocked()); tries++)
      await new Promise((resolve) => setTimeout(resolve, 200));
    await page.reload();
    await open('Usage');
    const log = page.getByRole('table', { name: 'Calls, newest first' });
    await log.getByRole('row').nth(1).waitFor();
    const newest = await newestCall(log);
    expect(newest('Guardrail')).toBe('Blocked');
    expect(newest('Status')).toBe('400');

    // Detached again: the key's later calls in this suite go through unguarded.
    await open('Guardrails');
    await attach.getByLabel('Key').selectOption({ label: keyName });
    await attach.getByLabel('No Orion').uncheck();
    await attach.getByRole('button', { name: "Save the key's guardrails" }).click();
    await page.getByRole('form', { name: 'Attach to a key' }).getByLabel('No Orion').waitFor();
  }, 120_000);

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
  }, 90_000);

  (EVERYTHING_SERVER.unavailable ? it.skip : it)(
    "adds an MCP tool server and shows its probe and the tools found; a key's allowed tools; deletes the server",
    async () => {
      const everything = await startEverythingServer();
      try {
        await open('Tool servers');
        const form = page.getByRole('form', { name: 'Add a tool server' });
        await form.getByLabel('Label').fill('Everything');
        await form.getByLabel('MCP URL (Streamable HTTP)').fill(everything.url);
        await form.getByLabel('Bearer token (blank if none is needed)').fill('console-bearer-secret');
        await form.getByLabel('Headers').fill('X-Tenant: console-header-secret');
        await form.getByRole('button', { name: 'Add and probe' }).click();
        const probe = page.getByRole('status').filter({ hasText: /^Answered as / });
        await probe.waitFor();
        expect(await probe.textContent()).toMatch(/[1-9]\d* tools found/);
        const servers = page.getByRole('table', { name: 'MCP tool servers' });
        const row = servers.getByRole('row').filter({ hasText: 'Everything' });
        await row.getByText(/^\d+ tools$/).click();
        await row.getByText('everything__echo', { exact: true }).waitFor();
        // The secrets went to the server and never come back to the page.
        expect(await page.content()).not.toContain('console-bearer-secret');
        expect(await page.content()).not.toContain('console-header-secret');
        await page.getByRole('button', { name: 'Re-probe Everything' }).click();
        await probe.waitFor();
        await accessible('tool-servers');

        await open('Keys');
        await page.getByRole('button', { name: `Edit ${keyName}` }).click();
        const dialog = page.getByRole('dialog', { name: `Edit ${keyName}` });
        const allowed = dialog.getByLabel(/^Allowed MCP tools/);
        await allowed.fill('everything__echo, everything__get-*');
        await dialog.getByRole('button', { name: 'Save changes' }).click();
        await dialog.waitFor({ state: 'hidden' });
        const whoami = await jsonOf(
          await fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${key}` } }),
        );
        expect(whoami.allowed_tools).toEqual(['everything__echo', 'everything__get-*']);
        await page.getByRole('button', { name: `Edit ${keyName}` }).click();
        expect(await dialog.getByLabel(/^Allowed MCP tools/).inputValue()).toBe('everything__echo, everything__get-*');
        await dialog.getByLabel(/^Allowed MCP tools/).fill('');
        await dialog.getByRole('button', { name: 'Save changes' }).click();
        await dialog.waitFor({ state: 'hidden' });

        // A tool call through /mcp is a row of the request log shown as one: the tool and its server, no tokens.
        const mcp = new Client({ name: 'console-e2e', version: '1.0.0' });
        await mcp.connect(
          new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${key}` } },
          }),
        );
        try {
          const echoed = await mcp.callTool({ name: 'everything__echo', arguments: { message: 'from the console' } });
          expect(echoed.isError).toBeFalsy();
        } finally {
          await mcp.close();
        }
        await untilUsage(base, key, (rows) => rows[0]?.served_by === 'mcp:everything');
        await page.reload();
        await open('Usage');
        await page.getByRole('combobox', { name: /^Kind/ }).selectOption('tool');
        const log = page.getByRole('table', { name: 'Calls, newest first' });
        expect(await countSettles(log.getByRole('row'), 2)).toBe(2);
        const toolCall = await newestCall(log);
        expect(['Model', 'Served by', 'Status', 'Tokens in', 'Tokens out'].map(toolCall)).toEqual([
          'Tool call echo on everything',
          'mcp:everything',
          '200',
          '—',
          '—',
        ]);
        const { detail, fact } = await openNewestCall(page, log, 'Tool call details');
        expect([await fact('Tool server'), await fact('Tool'), await fact('Name at /mcp')]).toEqual([
          'everything',
          'echo',
          'everything__echo',
        ]);
        expect(await detail.locator('dt:text-is("Tokens in")').count()).toBe(0);
        await detail.getByRole('button', { name: 'Close' }).click();
        await detail.waitFor({ state: 'hidden' });

        await open('Tool servers');
        await page.getByRole('button', { name: 'Delete Everything' }).click();
        await page.getByRole('button', { name: 'Delete tool server' }).click();
        await servers.waitFor({ state: 'detached' });
        await page.getByText(/^No tool servers yet/).waitFor();
      } finally {
        await everything.stop();
      }
    },
    90_000,
  );

  it('a batch: a bad line refused by number; run to completed, its output saved, its lines in the log', async () => {
    await open('Batches');
    await page.getByText(/^No batches yet/).waitFor();
    const lines = ['a', 'b', 'c'].map((id) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'house', messages: [{ role: 'user', content: `Say ${id}` }], max_tokens: 8 },
      }),
    );
    const upload = page.getByRole('form', { name: 'Upload an input file' });
    const chooseFile = (name: string, text: string) =>
      upload
        .getByLabel('Input file (JSONL)')
        .setInputFiles({ name, mimeType: 'application/jsonl', buffer: Buffer.from(text) });
    await chooseFile('bad.jsonl', `${lines[0]}\n${lines[0]}\n`);
    await upload.getByRole('button', { name: 'Upload', exact: true }).click();
    await upload
      .getByRole('alert')
      .getByText(/not valid: line 2: /)
      .waitFor();
    // The refusal is the one error the browser logs on purpose in this suite.
    for (let tries = 0; tries < 20 && consoleErrors.length === 0; tries++) await page.waitForTimeout(50);
    expect(consoleErrors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);

    await chooseFile('questions.jsonl', lines.join('\n'));
    await upload.getByRole('button', { name: 'Upload', exact: true }).click();
    await upload
      .getByRole('status')
      .getByText(/^Uploaded questions\.jsonl as file-/)
      .waitFor();
    const create = page.getByRole('form', { name: 'Create a batch' });
    await create.getByRole('option', { name: /^questions\.jsonl \(file-/ }).waitFor({ state: 'attached' });
    expect(await create.getByLabel('Endpoint', { exact: false }).inputValue()).toBe('/v1/chat/completions');
    await create.getByRole('button', { name: 'Create batch' }).click();
    const created = create.getByRole('status').getByText(/^Created batch_/);
    await created.waitFor();
    const batchId = /batch_[A-Za-z0-9_-]+/.exec((await created.textContent()) ?? '')?.[0] ?? '';

    // The list reads the batch again while it runs, until it settles.
    const row = page
      .getByRole('table', { name: 'OpenAI batches, newest first' })
      .getByRole('row')
      .filter({ hasText: batchId });
    await row.getByRole('cell', { name: 'Completed', exact: true }).waitFor({ timeout: 60_000 });
    await row.getByText('3 of 3 done', { exact: true }).waitFor();
    expect(await row.getByRole('button', { name: `Cancel ${batchId}` }).count()).toBe(0);
    expect(await row.getByRole('button', { name: `Download the errors of ${batchId}` }).count()).toBe(0);
    await accessible('batches');
    const downloading = page.waitForEvent('download');
    await row.getByRole('button', { name: `Download the output of ${batchId}` }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toMatch(/\.jsonl$/);
    const output = (await readFile(await download.path(), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { custom_id: string; response: { status_code: number } });
    expect(output.map((line) => [line.custom_id, line.response.status_code]).sort()).toEqual([
      ['a', 200],
      ['b', 200],
      ['c', 200],
    ]);

    // Each line is a call of the request log, marked as a batch line of this batch.
    await untilUsage(base, key, (rows) => rows.filter((one) => one.request_id.startsWith('batch_req_')).length === 3);
    await page.reload();
    await open('Usage');
    await page.getByRole('combobox', { name: /^Kind/ }).selectOption('batch');
    const log = page.getByRole('table', { name: 'Calls, newest first' });
    expect(await countSettles(log.getByRole('row'), 4)).toBe(4);
    const line = await newestCall(log);
    expect([line('Model'), line('Status')]).toEqual(['house Batch', '200']);
    const { detail, fact } = await openNewestCall(page, log);
    expect(await fact('Batch')).toMatch(new RegExp(`^Line [1-3] of ${batchId}$`));
    await detail.getByRole('button', { name: 'Close' }).click();
    await detail.waitFor({ state: 'hidden' });
  }, 120_000);

  it('a message batch: bad input named by line; run to ended, its results saved, deleted; lines marked', async () => {
    await open('Batches');
    await page.getByText(/^No message batches yet/).waitFor();
    const request = (id: string) =>
      JSON.stringify({
        custom_id: id,
        params: { model: 'house', max_tokens: 8, messages: [{ role: 'user', content: `Say ${id}` }] },
      });
    const form = page.getByRole('form', { name: 'Create a message batch' });
    const requests = form.getByLabel('Requests', { exact: true });
    const createButton = form.getByRole('button', { name: 'Create message batch' });

    // Input that is not JSON lines is refused by the page, naming the line; nothing is sent.
    await requests.fill(`${request('a')}\nnot json`);
    await createButton.click();
    await form
      .getByRole('alert')
      .getByText(/^Line 2 is not JSON: /)
      .waitFor();
    // A request the API refuses: its message, after the line it is about (blank lines counted as the editor does).
    await requests.fill(`${request('a')}\n\n${request('not an id')}`);
    await createButton.click();
    await form
      .getByRole('alert')
      .getByText(/^line 3, custom_id: 1 to 64 letters, digits, `_` or `-`\. \(invalid_request_error\)$/)
      .waitFor();
    for (let tries = 0; tries < 20 && consoleErrors.length === 0; tries++) await page.waitForTimeout(50);
    expect(consoleErrors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);

    // A file chosen fills the box; what is in the box is what is sent.
    await form.getByLabel('Requests file (JSONL or JSON)').setInputFiles({
      name: 'questions.jsonl',
      mimeType: 'application/jsonl',
      buffer: Buffer.from(['a', 'b', 'c'].map(request).join('\n')),
    });
    for (let tries = 0; tries < 50 && !(await requests.inputValue()).includes('"custom_id":"c"'); tries++)
      await page.waitForTimeout(50);
    await createButton.click();
    const created = form.getByRole('status').getByText(/^Created msgbatch_/);
    await created.waitFor();
    const batchId = /msgbatch_[A-Za-z0-9_-]+/.exec((await created.textContent()) ?? '')?.[0] ?? '';
    expect(await requests.inputValue()).toBe('');

    const row = page
      .getByRole('table', { name: 'Message batches, newest first' })
      .getByRole('row')
      .filter({ hasText: batchId });
    await row.getByRole('cell', { name: 'Ended', exact: true }).waitFor({ timeout: 60_000 });
    await row.getByText('3 of 3 done: 3 succeeded', { exact: true }).waitFor();
    expect(await row.getByRole('button', { name: `Cancel ${batchId}` }).count()).toBe(0);
    await accessible('batches');

    const downloading = page.waitForEvent('download');
    await row.getByRole('button', { name: `Download the results of ${batchId}` }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe(`${batchId}-results.jsonl`);
    const results = (await readFile(await download.path(), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { custom_id: string; result: { type: string } });
    expect(results.map((line) => [line.custom_id, line.result.type])).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
      ['c', 'succeeded'],
    ]);

    // A caller sending one of its line ids as its own x-request-id makes a model call, not a batch line.
    const spoofed = batchId.replace('msgbatch_', 'msgbatch_req_') + '_1';
    const call = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-request-id': spoofed },
      body: JSON.stringify({ model: 'house', max_tokens: 8, messages: [{ role: 'user', content: 'Say d' }] }),
    });
    expect(call.status).toBe(200);
    await untilUsage(base, key, (rows) => rows.filter((one) => one.request_id === spoofed).length === 2);
    await page.reload();
    await open('Usage');
    const log = page.getByRole('table', { name: 'Calls, newest first' });
    await page.getByRole('combobox', { name: /^Kind/ }).selectOption('model');
    const newest = await newestCall(log);
    expect([newest('Model'), newest('Status')]).toEqual(['house', '200']);
    const spoofedCall = await openNewestCall(page, log);
    expect(await spoofedCall.fact('Request id')).toBe(spoofed);
    expect(await spoofedCall.detail.locator('dt:text-is("Batch")').count()).toBe(0);
    await spoofedCall.detail.getByRole('button', { name: 'Close' }).click();
    await spoofedCall.detail.waitFor({ state: 'hidden' });
    // The batch lines: the three of the OpenAI batch before and these three, each marked.
    await page.getByRole('combobox', { name: /^Kind/ }).selectOption('batch');
    expect(await countSettles(log.getByRole('row'), 7)).toBe(7);
    const line = await newestCall(log);
    expect([line('Model'), line('Status')]).toEqual(['house Batch', '200']);
    const { detail, fact } = await openNewestCall(page, log);
    expect(await fact('Batch')).toMatch(new RegExp(`^Line [1-3] of ${batchId}$`));
    await detail.getByRole('button', { name: 'Close' }).click();
    await detail.waitFor({ state: 'hidden' });

    // Deleted after a confirmation: gone from the list and from the API.
    await open('Batches');
    await row.getByRole('button', { name: `Delete ${batchId}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this message batch?' });
    await confirm.getByRole('button', { name: 'Delete message batch' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByText(/^No message batches yet/).waitFor();
    const gone = await fetch(`${base}/v1/messages/batches/${batchId}`, { headers: { 'x-api-key': key } });
    expect(gone.status).toBe(404);
  }, 120_000);

  let deviceToken = '';

  it("approves a device code at the pairing flow's verification URI, signing in first at that host name", async () => {
    const pairing = await jsonOf(
      await fetch(`${base}/v1/devices/pair`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          kind: 'cli',
          label: 'build box',
          fingerprint: 'fp-console-test',
          capabilities: { tools_count: 7, held_vendors: ['openai'], held_models: ['house'] },
        }),
      }),
    );
    // The URI is BASE_URL's (localhost), never built from the request's Host header; the person is signed
    // in at 127.0.0.1, which is another site to the browser, so the page says why it asks to sign in.
    expect(pairing.verification_uri).toBe(`${otherHost}/device`);
    await page.goto(pairing.verification_uri_complete);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByText(/Sign in to approve the device/).textContent()).toContain(
      'does not count at localhost',
    );
    await accessible('device-sign-in');
    await signIn(page, EMAIL);
    await page.getByRole('heading', { level: 1, name: 'Device activation' }).waitFor();
    expect(new URL(page.url()).host).toBe(new URL(otherHost).host);
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
    deviceToken = (await jsonOf(token)).device_token;
    expect(deviceToken).toMatch(/^sbd_/);
    await page.goto(`${base}/console/`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }, 90_000);

  it('lists the device online with its capabilities, renames it, and unlinks it so its token is refused', async () => {
    const heartbeat = await fetch(`${base}/v1/devices/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${deviceToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(heartbeat.status).toBe(204);
    await open('Devices');
    const row = page.getByRole('row', { name: /build box/ });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual(
      expect.arrayContaining(['Online', '7 tools; vendors: openai; 1 model']),
    );
    await accessible('devices');
    await page.getByRole('button', { name: 'Rename build box' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rename device' });
    await dialog.getByLabel('Name').fill('render box');
    await dialog.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('cell', { name: 'render box', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Unlink render box' }).click();
    await page
      .getByRole('dialog', { name: 'Unlink this device?' })
      .getByRole('button', { name: 'Unlink device' })
      .click();
    await page.getByText(/No paired devices yet/).waitFor();
    const refused = await fetch(`${base}/v1/devices/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${deviceToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(refused.status).toBe(401);
  }, 90_000);

  it('a team: created and renamed, an invite accepted by the invited person only, roles, and team keys', async () => {
    await open('Teams');
    await page.getByText(/You are in no team yet/).waitFor();
    await page.getByLabel('New team name').fill('Platform');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('link', { name: 'Platform', exact: true }).click();
    await page.getByLabel('Team name', { exact: true }).fill('Platform team');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByRole('link', { name: 'Platform team', exact: true }).waitFor();

    // The only owner can neither leave nor step down: no Leave button, no role choice, and the reason shown.
    const me = page.getByRole('row', { name: /\(you\)/ });
    await me.getByText(/the last owner/).waitFor();
    expect(await me.getByRole('button', { name: /Leave/ }).count()).toBe(0);
    expect(await me.getByRole('combobox').count()).toBe(0);

    // A team budget of 50 credits a week in Paris, and a member's inside it (the form offers no more than 50).
    const teamBudget = page.getByRole('form', { name: 'Team budget' });
    await teamBudget.getByLabel('Cap (credits)').fill('50');
    await teamBudget.getByLabel('Period').selectOption('weekly');
    await teamBudget.getByLabel('Time zone').fill('Europe/Paris');
    await teamBudget.getByRole('button', { name: 'Set budget' }).click();
    await page.getByText(/0 of 50 credits spent this week; resets .* \(Europe\/Paris\)/).waitFor();
    await me.getByRole('button', { name: /^Budget of / }).click();
    const memberBudget = page.getByRole('dialog', { name: /^Budget of / });
    expect(await memberBudget.getByLabel('Cap (credits)').getAttribute('max')).toBe('50');
    await memberBudget.getByLabel('Cap (credits)').fill('10');
    await memberBudget.getByRole('button', { name: 'Save budget' }).click();
    await me.getByText(/0 of 10 credits spent this month/).waitFor();
    // A dialog closes once every read its write refreshes has come back, which can be after the one just seen. Until
    // then it is modal and the page behind it inert: a fill there types nothing (a click waits, a fill does not).
    await memberBudget.waitFor({ state: 'hidden' });

    await page.getByLabel('Email to invite').fill(INVITEE);
    await page.getByRole('combobox', { name: 'Role', exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Send invite' }).click();
    const invite = page.getByRole('row', { name: new RegExp(INVITEE.replace(/\./g, '\\.')) });
    await invite.waitFor();
    await page.getByRole('button', { name: `Resend the invite to ${INVITEE}` }).click();
    await invite.getByText(/^2×/).waitFor();
    await page.getByRole('button', { name: `Copy link for ${INVITEE}` }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    const link = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(link).toMatch(new RegExp(`^${base.replace(/\./g, '\\.')}/console/invite\\?code=`));

    // A second invite, revoked: it leaves the list.
    await page.getByLabel('Email to invite').fill(`later.${INVITEE}`);
    await page.getByRole('button', { name: 'Send invite' }).click();
    await page.getByRole('button', { name: `Revoke the invite to later.${INVITEE}` }).click();
    const revokeInvite = page.getByRole('dialog', { name: 'Revoke this invite?' });
    await revokeInvite.getByRole('button', { name: 'Revoke invite' }).click();
    expect(await countSettles(page.getByRole('table', { name: /Pending invites/ }).getByRole('row'), 2)).toBe(2);
    await revokeInvite.waitFor({ state: 'hidden' });

    // Team key: minted with Full access, it holds the scopes a team key may, never keys:write.
    await page.getByLabel('Key name').fill('team ci');
    await page.getByLabel('Access').selectOption('full_access');
    await page.getByRole('button', { name: 'Mint team key' }).click();
    await page.getByRole('button', { name: 'Done' }).click();
    const scopes = await page
      .getByRole('row', { name: /team ci/ })
      .getByRole('cell')
      .nth(2)
      .textContent();
    expect(scopes).toContain('gateway:invoke');
    expect(scopes).not.toContain('keys:write');
    expect(scopes).not.toContain('teams:write');
    // The tool-server pool: anyone's servers under the default policy, so the owner is listed; theirs are gone, so
    // the pool holds no server.
    const pool = page.getByRole('region', { name: 'Tool-server pool' });
    await pool
      .getByRole('table', { name: 'Members who may add to the pool' })
      .getByRole('cell', { name: EMAIL, exact: true })
      .waitFor();
    await pool.getByText(/^No member pools a tool server yet/).waitFor();
    await pool.getByText(/^You have no tool servers/).waitFor();
    await accessible('team');

    // Someone else holding the link is refused, and the invite stays for the invitee.
    await signUpByApi(STRANGER);
    await signUpByApi(INVITEE);
    const stranger = await newPage();
    await stranger.goto(link);
    await signIn(stranger, STRANGER);
    await stranger.getByRole('heading', { level: 1, name: 'Team invite' }).waitFor();
    await stranger.getByRole('button', { name: 'Accept the invite' }).click();
    await stranger.getByText(/sent to another address/).waitFor();

    const invitee = await newPage();
    const inviteeErrors: string[] = [];
    invitee.on('console', (message) => void (message.type() === 'error' && inviteeErrors.push(message.text())));
    await invitee.goto(link);
    expect(await invitee.getByText(/Sign in as the address the invite was sent to/).count()).toBe(1);
    await signIn(invitee, INVITEE);
    await invitee.getByRole('heading', { level: 1, name: 'Team invite' }).waitFor();
    await accessible('invite', invitee);
    await invitee.getByRole('button', { name: 'Accept the invite' }).click();
    expect(await invitee.getByRole('status').filter({ hasText: 'You joined' }).textContent()).toContain(
      'You joined Platform team as editor',
    );
    await invitee.getByRole('link', { name: 'Open the team' }).click();
    await invitee
      .getByRole('row', { name: /\(you\)/ })
      .getByRole('button', { name: 'Leave Platform team' })
      .waitFor();
    expect(inviteeErrors).toEqual([]);
    await invitee.context().close();
    await stranger.context().close();

    // Back with the owner: the new member shows; made an owner, the first owner may now step down.
    await page.reload();
    const member = page.getByRole('row', { name: new RegExp(INVITEE.replace(/\./g, '\\.')) });
    await member.getByRole('combobox', { name: `Role of ${INVITEE}` }).selectOption('owner');
    await me.getByRole('button', { name: 'Leave Platform team' }).waitFor();
    await me.getByRole('combobox').selectOption('admin');
    // Now an admin, the person cannot act on the owner they made (an admin still sets members' budgets).
    expect(await countSettles(member.getByRole('combobox'), 0)).toBe(0);
    expect(await member.getByRole('button', { name: /^(Remove|Leave)/ }).count()).toBe(0);
  }, 90_000);

  it('runs: a project, a run followed live across a dropped connection with no gap or repeat, a webhook', async () => {
    // A webhook receiver that refuses deliveries (so the attempts and their status codes show) until it is fixed.
    const received: string[] = [];
    let answer = 500;
    const receiver: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => (received.push(req.url ?? ''), res.writeHead(answer).end()));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    try {
      await open('Runs');
      await page.getByText(/No projects yet/).waitFor();
      await page.getByLabel('Webhook URL').fill(hookUrl);
      await page.getByRole('button', { name: 'Add webhook' }).click();
      expect(await page.getByLabel('Signing secret').inputValue()).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('cell', { name: hookUrl, exact: true }).waitFor();
      // Shown once: nothing on the page holds the secret any more.
      expect(await page.getByLabel('Signing secret').count()).toBe(0);

      await page.getByLabel('Project name').fill('docs bot');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('cell', { name: 'docs bot', exact: true }).waitFor();
      await accessible('runs');

      // The project's workspace: a file a run wrote (written here straight into the runs service's table where
      // that is a PostgreSQL database; the bundled simulator's runs only list files), opened as text.
      const runsDb = databases[3]!;
      if (runsDb.databaseUrl) {
        const projects = (await page.evaluate(async () =>
          (await fetch('/v1/projects', { headers: { accept: 'application/json' } })).json(),
        )) as { data: { id: string }[] };
        const projectId = projects.data[0]!.id;
        const sql = new pg.Client({ connectionString: runsDb.databaseUrl });
        await sql.connect();
        try {
          await sql.query('INSERT INTO workspace_files (project_id, path, content) VALUES ($1, $2, $3)', [
            projectId,
            'notes/plan.md',
            '<b>Plan</b>: ship the docs bot.',
          ]);
        } finally {
          await sql.end();
        }
        await page.getByRole('link', { name: 'Files of docs bot' }).click();
        const files = page.getByRole('table', { name: 'Files of docs bot' });
        await files.getByRole('button', { name: 'Open notes/plan.md' }).click();
        // Shown as the text it is: the markup stays inert characters.
        const content = page.getByRole('region', { name: 'Content of notes/plan.md' });
        expect(await content.textContent()).toBe('<b>Plan</b>: ship the docs bot.');
        expect(await files.getByRole('cell', { name: '31 B' }).count()).toBe(1);
        await accessible('project-files');
      }

      // A tool call, then a long reply the bundled simulator streams over a few seconds.
      await page.getByLabel('Prompt').fill('sim:tool sim-tokens:800 what is in the workspace?');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.getByRole('heading', { level: 1, name: 'Run', exact: true }).waitFor();
      const runId = new URL(page.url()).searchParams.get('run') ?? '';
      const log = page.getByRole('table', { name: 'Event log' });
      await log.getByRole('cell', { name: 'message.delta', exact: true }).first().waitFor();

      // The connection drops mid-run; back online, the stream resumes from the last event the page holds.
      await page.context().setOffline(true);
      let heldWhileOffline: number;
      try {
        await page.getByText(/Connection lost; reconnecting/).waitFor();
        heldWhileOffline = await log.getByRole('row').count();
        // Events go on being recorded while the page is away.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        await page.context().setOffline(false);
      }
      await page.getByText('The run has settled; its stream has ended.').waitFor({ timeout: 60_000 });

      // What the API stored, read as the page reads it (its session cookie, same origin).
      const readJson = (url: string) =>
        page.evaluate(async (path) => {
          const response = await fetch(path, { headers: { accept: 'application/json' } });
          return { status: response.status, body: await response.json() };
        }, url);
      const stored = await readJson(`/v1/runs/${runId}/events?limit=1000`);
      expect(stored.status).toBe(200);
      const ids = (await log.getByRole('row').allTextContents()).slice(1).map((row) => Number.parseInt(row, 10));
      expect(ids.length).toBeGreaterThan(heldWhileOffline);
      const events = (stored.body as { data: { seq: number; type: string }[] }).data;
      expect(ids).toEqual(events.map((event) => event.seq));
      expect(ids).toEqual(ids.map((_id, index) => index + 1));
      expect(events.at(-1)?.type).toBe('run.succeeded');
      // The transcript shows the tool call and its result, and the reply the run settled with.
      await page.getByText('Tool call list_files').waitFor();
      await page.getByText(/Tool result list_files: ok/).waitFor();
      const run = (await readJson(`/v1/runs/${runId}`)).body as { status: string; output: string };
      expect(run.status).toBe('succeeded');
      await page.getByText(run.output.slice(0, 40)).first().waitFor();
      await accessible('run');

      // The settled run's delivery was refused: its attempt shows with the receiver's status code.
      await page.getByRole('link', { name: 'All runs' }).click();
      await page.getByRole('link', { name: `Deliveries to ${hookUrl}` }).click();
      const deliveries = page.getByRole('table', { name: `Deliveries to ${hookUrl}` });
      await deliveries.getByRole('cell', { name: /#1: 500/ }).waitFor({ timeout: 20_000 });
      expect(received.length).toBeGreaterThan(0);

      // Its one retry refused too, the delivery has failed. Once the receiver is fixed, a resend gets through:
      // the new attempt shows after the two refused ones.
      const resend = deliveries.getByRole('button', { name: /^Resend the run\.succeeded delivery of run_/ });
      await resend.waitFor({ timeout: 20_000 });
      await deliveries.getByRole('cell', { name: 'failed', exact: true }).waitFor();
      answer = 204;
      await resend.click();
      await deliveries.getByRole('cell', { name: '#1: 500, #2: 500, #3: 204' }).waitFor({ timeout: 20_000 });
      await deliveries.getByRole('cell', { name: 'succeeded', exact: true }).waitFor();
      expect(await resend.count()).toBe(0);
      await accessible('webhook-deliveries');

      // A second run, cancelled while it works: it settles cancelled.
      await page.getByLabel('Prompt').fill('sim-tokens:5000 a long answer');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await page.getByText('The run has settled; its stream has ended.').waitFor({ timeout: 30_000 });
      await page.getByRole('table', { name: 'Event log' }).getByRole('cell', { name: 'run.cancelled' }).waitFor();
      await page.getByRole('definition').filter({ hasText: 'Cancelled' }).waitFor();
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 120_000);

  it('an X build followed on the board to done, with its screenshot; no operator controls for others', async () => {
    await open('X builds');
    await page.getByLabel('What to build').fill('A bouncing ball on a dark canvas');
    await page.getByRole('button', { name: 'Queue build' }).click();
    const card = page.getByRole('link', { name: 'A bouncing ball on a dark canvas' });
    await card.waitFor();
    await accessible('x-builds');
    // Not an operator: none of the queue's controls, and the API refuses them all the same.
    for (const name of ['Queue', 'Blocklist'])
      expect(await page.getByRole('heading', { level: 2, name, exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Pause intake|Resume intake|Block author/ }).count()).toBe(0);
    const refused = await fetch(`${base}/v1/x-builds/queue`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ paused: true }),
    });
    expect(refused.status).toBe(403);

    // The board moves the build along by itself until it is done.
    await page
      .getByRole('region', { name: 'Done builds' })
      .getByRole('link', { name: 'A bouncing ball on a dark canvas' })
      .waitFor({ timeout: 120_000 });
    await card.click();
    await page.getByRole('heading', { level: 1, name: 'Build', exact: true }).waitFor();
    const screenshot = page.getByRole('img', { name: /^Screenshot of the app/ });
    await screenshot.waitFor();
    // Loaded at its natural width (the page's CSP forbids the string form of waitForFunction).
    const naturalWidth = () => screenshot.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    for (const deadline = Date.now() + 10_000; (await naturalWidth()) !== 1280;) {
      expect(Date.now()).toBeLessThan(deadline);
      await page.waitForTimeout(100);
    }
    const appLink = page.getByRole('link', { name: 'Open the published app' });
    expect(await appLink.getAttribute('href')).toMatch(/^http:\/\/[a-z0-9-]+\.apps\./);
    expect(await page.getByRole('blockquote').count()).toBe(1);
    expect(await page.getByRole('table', { name: 'Stage timings' }).getByRole('row').count()).toBeGreaterThan(3);
    expect(await page.getByRole('heading', { name: 'Operator controls' }).count()).toBe(0);
    await accessible('x-build');
  }, 180_000);

  it("an operator runs the lane from the console: intake, limits, the blocklist, and one job's controls", async () => {
    const operator = await newPage();
    operator.on('console', (message) => void (message.type() === 'error' && consoleErrors.push(message.text())));
    await operator.goto(`${base}/console/x-builds`);
    await signIn(operator, OPERATOR);
    await operator.getByRole('heading', { level: 1, name: 'X builds' }).waitFor();
    const queue = operator.getByRole('heading', { level: 2, name: 'Queue', exact: true });
    await queue.waitFor();
    await operator.getByText(/^Intake is/).waitFor();
    await accessible('x-builds-operator', operator);

    // The kill switch, both ways.
    await operator.getByRole('button', { name: 'Pause intake' }).click();
    await operator.getByText('Intake is paused (operator)', { exact: false }).waitFor();
    await operator.getByRole('button', { name: 'Resume intake' }).click();
    await operator.getByRole('button', { name: 'Pause intake' }).waitFor();

    // The limits are saved, and read back after a reload.
    const limits = operator.getByRole('form', { name: 'Queue limits' });
    await limits.getByLabel('Max concurrent').fill('3');
    await limits.getByLabel('Max queue').fill('250');
    const saved = operator.waitForResponse(
      (reply) => reply.url().endsWith('/v1/x-builds/queue') && reply.request().method() === 'PATCH',
    );
    await limits.getByRole('button', { name: 'Save limits' }).click();
    expect((await saved).status()).toBe(200);
    await operator.reload();
    expect(await operator.getByRole('form', { name: 'Queue limits' }).getByLabel('Max queue').inputValue()).toBe('250');

    // The blocklist: an author blocked, listed, and unblocked.
    const blockForm = operator.getByRole('form', { name: 'Block an author' });
    await blockForm.getByLabel(/Author id/).fill('1790000000000000001');
    await blockForm.getByRole('button', { name: 'Block author' }).click();
    const blocked = operator.getByRole('table', { name: 'Blocked authors' });
    await blocked.getByRole('cell', { name: '1790000000000000001', exact: true }).waitFor();
    await operator.getByRole('button', { name: 'Unblock 1790000000000000001' }).click();
    await operator.getByText('No author is blocked.').waitFor();

    // One job: cancelled, requeued at the front, followed to done, and its app taken down.
    await operator.getByLabel('What to build').fill('A pendulum clock that ticks');
    await operator.getByRole('button', { name: 'Queue build' }).click();
    await operator.getByRole('link', { name: 'A pendulum clock that ticks' }).click();
    await operator.getByRole('heading', { level: 1, name: 'Build', exact: true }).waitFor();
    await operator.getByRole('heading', { name: 'Operator controls' }).waitFor();
    await operator.getByRole('button', { name: 'Cancel build' }).click();
    const status = operator.getByRole('definition').first();
    await operator.getByRole('button', { name: 'Requeue at the front' }).waitFor();
    expect(await status.textContent()).toBe('cancelled');
    await operator.getByRole('button', { name: 'Requeue at the front' }).click();
    await operator.getByRole('button', { name: 'Cancel build' }).waitFor();
    expect(await status.textContent()).not.toBe('cancelled');
    // The app is published before the job is done (it is verified, and the reply drafted, after).
    await operator
      .getByRole('definition')
      .filter({ hasText: /^done$/ })
      .waitFor({ timeout: 120_000 });
    const appUrl = await operator.getByRole('link', { name: 'Open the published app' }).getAttribute('href');
    await operator.getByRole('button', { name: 'Take down the app' }).click();
    await operator
      .getByRole('dialog', { name: 'Take down this app?' })
      .getByRole('button', { name: 'Take down' })
      .click();
    await operator.getByText(/^Taken down /).waitFor();
    expect(await operator.getByRole('link', { name: 'Open the published app' }).count()).toBe(0);
    expect(appUrl).toMatch(/^http:\/\/[a-z0-9-]+\.apps\./);
    await operator.context().close();
  }, 180_000);

  // Five pages, each at two widths: longer than the default timeout on a loaded machine.
  it('copies an existing key’s agent setups with a placeholder where the secret goes', async () => {
    await open('Keys');
    await page.getByRole('button', { name: `Coding agents for ${keyName}` }).click();
    const dialog = page.getByRole('dialog', { name: `Use ${keyName} with a coding agent` });
    await dialog.getByRole('button', { name: 'Copy for Codex' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Copied the Codex setup' }).waitFor();
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(copied).toBe(
      shellSnippet(agentSetup('codex', { baseUrl: otherHost, apiKey: KEY_PLACEHOLDER, model: 'house' })),
    );
    // The secret is never shown again: neither the dialog nor what it copies holds it.
    expect(copied).not.toContain(key);
    expect(await dialog.textContent()).not.toContain(key);
    await dialog
      .getByRole('region', { name: 'Use this key with a coding agent' })
      .getByText('ANTHROPIC_BASE_URL')
      .first()
      .waitFor();
    await accessible('keys-agents');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
  });

  it('every other page passes axe with no serious or critical violation', async () => {
    for (const label of ['Overview', 'Credits and plan', 'Spend', 'Aliases', 'Keys']) {
      await open(label);
      await page
        .getByRole('status')
        .filter({ hasText: /^Loading/ })
        .first()
        .waitFor({ state: 'detached' });
      await accessible(label.toLowerCase().replace(/ /g, '-'));
    }
  }, 90_000);

  it('revokes a key after a confirmation, and the key is refused from then on', async () => {
    await open('Keys');
    await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    // Runs and builds mint keys of their own, revoked when they settle: this key's row is the one to read.
    await page
      .getByRole('row', { name: new RegExp(keyName) })
      .getByRole('cell', { name: /^Revoked/ })
      .waitFor();
    const refused = await fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${key}` } });
    expect([401, 403]).toContain(refused.status);
  });

  it('shows the revoke in the audit log with the session that made it and what changed', async () => {
    await open('Audit log');
    await page.getByLabel('Action').fill('key.revoke');
    // Runs and builds revoke the keys they minted, with no session: the console's own revoke names its session.
    const row = page.getByRole('row', { name: /key\.revoke.*session ses_[0-9a-f]{16}/ }).first();
    await row.waitFor();
    await row.getByText('1 field changed').click();
    await row.getByText('revoked_at').waitFor();
    expect((await page.getByRole('table', { name: 'Changes, newest first' }).textContent()) ?? '').not.toContain(key);
    await accessible('audit');
  }, 90_000);

  it('logged no error in the browser on any page visited', () => {
    expect(consoleErrors).toEqual([]);
  });
});

import { copyFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import type { Browser, Locator, Page } from 'playwright-core';
import { freePort, jsonOf, type TestDatabase } from '@sbc/testing';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { loadEmbeddedConfig, start, type RunningEmbedded } from '@sbc/app-embedded';
import {
  collectPageErrors,
  CONSOLE_ARTIFACTS,
  DESKTOP,
  embeddedDatabases,
  expectAccessible,
  launchChromium,
  requireConsoleBrowser,
} from '../support/browser';

// The console's playground in a real browser (Debian's chromium through playwright-core, as console.int.test.ts):
// a call in each dialect, the upstream's side beside the reply, two models compared; and, through the API, that a
// capture is its session's alone and never holds a secret.
const ROOT = path.resolve(__dirname, '../../..');
const PASSWORD = 'a playground password 1';
const EMAIL = `player.${Date.now()}@example.test`;
const OTHER = `other.${Date.now()}@example.test`;
// The house engine's own credential and a header of its own: neither may ever appear in a capture.
const ENGINE_KEY = 'sk-house-engine-0123456789abcdef';
const ENGINE_HEADER = 'engine-header-value-1234';

interface Capture {
  call_request_id: string;
  dialect: string;
  attempts: {
    upstream_dialect: string;
    path: string;
    request: { headers: Record<string, string>; body: string };
    response: { status: number; body: string } | null;
  }[];
  usage: { status: number; input_tokens: number; output_tokens: number; served_by: string };
}

describe('the console playground', () => {
  let dataDir: string;
  const databases: TestDatabase[] = [];
  let running: RunningEmbedded;
  let sim: RunningSim;
  let browser: Browser;
  let page: Page;
  let base: string;
  const consoleErrors: string[] = [];
  /** The request ids the playground showed, in the order of its calls. */
  const shownRequestIds: string[] = [];

  beforeAll(async () => {
    requireConsoleBrowser();
    dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-playground-'));
    const created = await embeddedDatabases('playground');
    databases.push(...created.databases);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    sim = await startSim(
      loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
    );
    running = await start(
      loadEmbeddedConfig({
        SBC_DATA_DIR: dataDir,
        PORT: String(port),
        BASE_URL: base,
        LOG_LEVEL: 'silent',
        HOUSE_ENGINES: JSON.stringify({
          house: [
            {
              dialect: 'openai',
              base_url: sim.url,
              model: 'sim-large',
              api_key: ENGINE_KEY,
              headers: { 'x-engine-token': ENGINE_HEADER },
            },
          ],
          'house-omni': [{ dialect: 'anthropic', base_url: sim.url, model: 'sim-large' }],
          'house-fast': [{ dialect: 'openai', base_url: sim.url, model: 'sim-small' }],
        }),
        ...created.env,
        UPSTREAM_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      }),
    );
    browser = await launchChromium();
    const context = await browser.newContext({ timezoneId: 'UTC', locale: 'en-GB', viewport: DESKTOP });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    collectPageErrors(page, consoleErrors);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await running?.stop();
    await sim?.stop();
    for (const db of databases) await db.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** The accessibility check of every console page (support/browser.ts). */
  const accessible = (name: string) => expectAccessible(page, name);

  /** Fills the prompt form and sends it; resolves once the reply's upstream side is shown. */
  async function send(options: {
    dialect: string;
    model: string;
    prompt: string;
    stream: boolean;
    extra?: string;
  }): Promise<Locator> {
    const form = page.getByRole('form', { name: 'Prompt' });
    await form.getByLabel('Dialect').selectOption({ label: options.dialect });
    await form.getByRole('combobox', { name: /^Model\b/ }).selectOption(options.model);
    await form.getByRole('textbox', { name: /^Prompt\b/ }).fill(options.prompt);
    await form.getByLabel('Stream the reply').setChecked(options.stream);
    await form.getByLabel('Extra request fields (JSON object, optional)').fill(options.extra ?? '');
    await form.getByRole('button', { name: /^Send/ }).click();
    const reply = page.getByRole('region', { name: `Reply: ${options.model}` });
    await reply.getByRole('heading', { name: /^Upstream reply: HTTP/ }).waitFor();
    shownRequestIds.push((await reply.locator('dt:text-is("Request id") + dd').textContent()) ?? '');
    return reply;
  }

  const fact = (where: Locator, label: string) => where.locator(`dt:text-is("${label}") + dd`).first().textContent();
  const bodyOf = async (where: Locator, name: string) =>
    (await where.getByRole('region', { name, exact: true }).textContent()) ?? '';

  it(
    'a call in each dialect (chat, responses, messages), with a tool, shows the request as the upstream ' +
      'received it and its reply as sent, each in its own dialect, with the dropped fields named',
    async () => {
      await page.goto(`${base}/console/`);
      await page.getByRole('button', { name: 'Create one' }).click();
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create an account' }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Playground' }).click();
      await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();

      // A tool, as a person adds one: its name and JSON schema.
      const form = page.getByRole('form', { name: 'Prompt' });
      await form.getByLabel('Tool name').fill('get_weather');
      await form.getByLabel('Tool description').fill('The weather in a city');
      await form.getByRole('button', { name: 'Add tool' }).click();
      await form.getByRole('button', { name: 'Remove tool get_weather' }).waitFor();

      // Chat completions, streamed, to an OpenAI-dialect engine: the tool call arrives, the upstream saw the tool.
      const chat = await send({
        dialect: 'Chat completions',
        model: 'house',
        prompt: 'What is the weather in Paris?',
        stream: true,
      });
      await chat.getByRole('region', { name: 'Model reply' }).getByText('Tool call get_weather').waitFor();
      await chat.getByRole('heading', { name: 'Upstream request: OpenAI chat completions' }).waitFor();
      expect(await fact(chat, 'Dropped fields')).toBe('none');
      const chatSent = JSON.parse(await bodyOf(chat, 'Upstream request body')) as Record<string, unknown>;
      expect(chatSent).toMatchObject({
        model: 'sim-large',
        stream: true,
        tools: [{ function: { name: 'get_weather' } }],
      });
      expect(await bodyOf(chat, 'Upstream reply body')).toContain('data: {');
      expect(await fact(chat, 'authorization')).toBe('[redacted]');

      // Responses, whole, translated to chat completions upstream; `truncation` cannot be honoured and is named.
      await form.getByRole('button', { name: 'Remove tool get_weather' }).click();
      const responses = await send({
        dialect: 'Responses',
        model: 'house',
        prompt: 'Say hello',
        stream: false,
        extra: '{"truncation": "auto"}',
      });
      await responses
        .getByRole('region', { name: 'Model reply' })
        .getByText(/Simulated reply/)
        .waitFor();
      expect(await fact(responses, 'Dropped fields')).toBe('truncation');
      const responsesSent = JSON.parse(await bodyOf(responses, 'Upstream request body')) as Record<string, unknown>;
      expect(responsesSent).toMatchObject({ model: 'sim-large', messages: [{ role: 'user', content: 'Say hello' }] });
      expect(JSON.parse(await bodyOf(responses, 'Upstream reply body'))).toMatchObject({
        object: 'chat.completion',
      });

      // Messages to an Anthropic-dialect engine: the upstream side is in Anthropic's dialect.
      const omni = await send({ dialect: 'Messages', model: 'house-omni', prompt: 'Hello', stream: true });
      await omni.getByRole('heading', { name: 'Upstream request: Anthropic messages' }).waitFor();
      expect(await bodyOf(omni, 'Upstream reply body')).toContain('event: message_start');
      expect(Number((await fact(omni, 'Tokens out'))?.replace(/,/g, ''))).toBeGreaterThan(0);

      // Messages, streamed, to an OpenAI-dialect engine (the README's screenshot): the request became chat
      // completions, and `top_k`, which that dialect has not, was dropped and named.
      const messages = await send({
        dialect: 'Messages',
        model: 'house',
        prompt: 'Tell me a story',
        stream: true,
        extra: '{"top_k": 5}',
      });
      await messages
        .getByRole('region', { name: 'Model reply' })
        .getByText(/Simulated reply/)
        .waitFor();
      expect(await fact(messages, 'Dropped fields')).toBe('top_k');
      await messages.getByRole('heading', { name: 'Upstream request: OpenAI chat completions' }).waitFor();
      const messagesSent = JSON.parse(await bodyOf(messages, 'Upstream request body')) as Record<string, unknown>;
      expect(messagesSent).toMatchObject({ messages: [{ role: 'user', content: 'Tell me a story' }], stream: true });
      expect(messagesSent).not.toHaveProperty('top_k');
      expect(await bodyOf(messages, 'Upstream reply body')).toContain('chat.completion.chunk');

      await accessible('playground');
      copyFileSync(path.join(CONSOLE_ARTIFACTS, 'playground.png'), path.join(ROOT, 'docs/console-playground.png'));
      expect(consoleErrors).toEqual([]);
    },
    120_000,
  );

  it('compares two models on the same prompt side by side, each with latency, tokens and cost', async () => {
    const form = page.getByRole('form', { name: 'Prompt' });
    await form.getByLabel('Dialect').selectOption({ label: 'Chat completions' });
    await form.getByRole('combobox', { name: /^Model\b/ }).selectOption('house');
    await form.getByLabel('Compare with a second model').check();
    await form.getByRole('combobox', { name: /^Second model\b/ }).selectOption('house-fast');
    await form.getByRole('textbox', { name: /^Prompt\b/ }).fill('Compare us');
    await form.getByLabel('Extra request fields (JSON object, optional)').fill('');
    await form.getByRole('button', { name: 'Send to both' }).click();
    for (const [title, model] of [
      ['First model', 'house'],
      ['Second model', 'house-fast'],
    ] as const) {
      const column = page.getByRole('region', { name: `${title}: ${model}` });
      await column.getByRole('heading', { name: /^Upstream reply: HTTP 200/ }).waitFor();
      expect(await fact(column, 'Latency')).toMatch(/^\d[\d,]* ms$/);
      expect(Number((await fact(column, 'Tokens in'))?.replace(/,/g, ''))).toBeGreaterThan(0);
      expect(await fact(column, 'Cost at list price')).toMatch(/^\$\d/);
      expect(await fact(column, 'Served by')).toBe('house');
      const sent = JSON.parse(await bodyOf(column, 'Upstream request body')) as { model: string };
      expect(sent.model).toBe(model === 'house' ? 'sim-large' : 'sim-small');
    }
    await accessible('playground-compare');
    expect(consoleErrors).toEqual([]);
  }, 90_000);

  it('playground calls are ordinary calls: each is in the request log, billed', async () => {
    let rows: { request_id?: string; status: number; credits_charged: number }[] = [];
    for (let tries = 0; tries < 50; tries++) {
      const listed = await page.request.get(`${base}/v1/usage/requests?limit=100`);
      rows = ((await listed.json()) as { data: typeof rows }).data;
      if (shownRequestIds.every((id) => rows.some((row) => row.request_id === id))) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (const id of shownRequestIds) {
      const row = rows.find((one) => one.request_id === id);
      expect({ id, status: row?.status }).toEqual({ id, status: 200 });
      expect(row!.credits_charged).toBeGreaterThan(0);
    }
  }, 60_000);

  it("a capture is its own account's session's alone, is never made for a key, and holds no secret", async () => {
    const session = async (email: string): Promise<string> => {
      if (email !== EMAIL)
        expect(
          (
            await fetch(`${base}/v1/auth/signup`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ email, password: PASSWORD }),
            })
          ).status,
        ).toBe(201);
      const signedIn: { token: string } = await jsonOf(
        await fetch(`${base}/v1/auth/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password: PASSWORD }),
        }),
      );
      return signedIn.token;
    };
    const owner = await session(EMAIL);
    const other = await session(OTHER);
    const captureOf = (id: string, credential?: string) =>
      fetch(`${base}/v1/usage/requests/${encodeURIComponent(id)}/capture`, {
        headers: credential ? { authorization: `Bearer ${credential}` } : {},
      });

    // A session token asking through the OpenAI SDK: the capture withholds the credential and a secret in the prompt.
    const secret = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX';
    const asOwner = new OpenAI({ apiKey: owner, baseURL: `${base}/v1`, defaultHeaders: { 'x-sbc-capture': '1' } });
    const { response } = await asOwner.chat.completions
      .create({ model: 'house', messages: [{ role: 'user', content: `my key is ${secret}` }] })
      .withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const captured = await captureOf(requestId, owner);
    expect(captured.status).toBe(200);
    const capture = (await captured.json()) as Capture;
    expect(capture).toMatchObject({ call_request_id: requestId, dialect: 'chat', usage: { status: 200 } });
    const text = JSON.stringify(capture);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(owner);
    expect(text).not.toContain(ENGINE_KEY);
    expect(text).not.toContain(ENGINE_HEADER);
    expect(capture.attempts[0]!.request.headers).toMatchObject({
      authorization: '[redacted]',
      'x-engine-token': '[redacted]',
      'content-type': 'application/json',
    });
    expect(capture.attempts[0]!.request.body).toContain('[redacted]');

    // Another account's session, and no credential at all, learn nothing; a malformed id names its parameter.
    const foreign = await captureOf(requestId, other);
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ error: 'not_found' });
    expect((await captureOf(requestId)).status).toBe(401);
    const malformed = await captureOf('not an id!', owner);
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'invalid_request', param: 'request_id' });

    // A key asking for a capture is ignored (an API caller can never make the edge keep bodies), and a key
    // cannot read captures at all.
    const minted: { key: string } = await jsonOf(
      await fetch(`${base}/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'playground test', scopes: ['gateway:invoke', 'usage:read'] }),
      }),
    );
    const asKey = new OpenAI({ apiKey: minted.key, baseURL: `${base}/v1`, defaultHeaders: { 'x-sbc-capture': '1' } });
    const keyed = await asKey.chat.completions
      .create({ model: 'house', messages: [{ role: 'user', content: 'hello' }] })
      .withResponse();
    expect((await captureOf(keyed.response.headers.get('x-request-id')!, owner)).status).toBe(404);
    expect((await captureOf(requestId, minted.key)).status).toBe(403);
  }, 60_000);
});

import { jsonOf } from '@sbc/testing';
import { stat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { loadEmbeddedConfig, start } from '@sbc/app-embedded';

describe('embedded start (every service in one process)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-embedded-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  // A first start creates four PGlite databases (initdb in WASM, one after another): tens of seconds on a
  // loaded 2-core machine.
  const FIRST_START_MS = 90_000;
  const config = () =>
    loadEmbeddedConfig({ SBC_DATA_DIR: dataDir, PORT: '0', BASE_URL: 'http://localhost:8080', LOG_LEVEL: 'silent' });

  it(
    'generates a bootstrap key on first start, saves it 0600, and serves whoami with it',
    async () => {
      const running = await start(config());
      try {
        expect(running.bootstrap.generated).toBe(true);
        expect(running.bootstrap.key).toMatch(/^sbc_[A-Za-z0-9]{32}$/);
        const mode = (await stat(path.join(dataDir, 'bootstrap-key'))).mode & 0o777;
        expect(mode).toBe(0o600);
        const res = await fetch(`${running.url}/v1/keys/whoami`, {
          headers: { authorization: `Bearer ${running.bootstrap.key}` },
        });
        expect(res.status).toBe(200);
        expect((await jsonOf(res)).name).toBe('bootstrap');
        expect((await fetch(`${running.url}/readyz`)).status).toBe(200);
      } finally {
        await running.stop();
      }
    },
    FIRST_START_MS,
  );

  it(
    'a restart keeps the data and the key, and does not show the key again',
    async () => {
      const running = await start(config());
      try {
        expect(running.bootstrap.generated).toBe(false);
        const res = await fetch(`${running.url}/v1/keys/whoami`, { headers: { 'x-api-key': running.bootstrap.key } });
        expect(res.status).toBe(200);

        // The owner is still the operator; a fresh sign-up on this `npm start` is not, not even with its session.
        const queue = (credential: string, init: RequestInit = {}) =>
          fetch(`${running.url}/v1/x-builds/queue`, {
            ...init,
            headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
          });
        expect((await queue(running.bootstrap.key)).status).toBe(200);
        const account = { email: 'newcomer@example.test', password: 'a long enough password 1' };
        const post = (route: string) =>
          fetch(`${running.url}${route}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(account),
          });
        expect((await post('/v1/auth/signup')).status).toBe(201);
        const session: string = (await jsonOf(await post('/v1/auth/sessions'))).token;
        const paused = await queue(session, { method: 'PATCH', body: JSON.stringify({ paused: true }) });
        expect(paused.status).toBe(403);
        expect((await jsonOf(await queue(running.bootstrap.key))).paused).toBe(false);
      } finally {
        await running.stop();
      }
    },
    FIRST_START_MS,
  );

  it(
    'the response cache works embedded (in memory): the second identical call is a hit, streamed and not',
    async () => {
      const running = await start(config());
      try {
        const openai = new OpenAI({ apiKey: running.bootstrap.key, baseURL: `${running.url}/v1`, maxRetries: 0 });
        const body = {
          model: 'house',
          max_tokens: 16,
          messages: [{ role: 'user' as const, content: `embedded cache ${Date.now()}` }],
        };
        const cached = { headers: { 'x-sbc-cache-ttl': '60' } };
        const first = await openai.chat.completions.create(body, cached).withResponse();
        const second = await openai.chat.completions.create(body, cached).withResponse();
        expect(first.response.headers.get('x-sbc-cache')).toBe('miss');
        expect(second.response.headers.get('x-sbc-cache')).toBe('hit');
        // The upstream makes a new id for every call it answers: the same id is the same reply, replayed (from the
        // neutral form, so without fields only the upstream's own dialect has, such as system_fingerprint).
        const { id, model, choices, usage } = first.data;
        expect(second.data).toMatchObject({
          id,
          model,
          choices: [{ message: { content: choices[0]!.message.content }, finish_reason: choices[0]!.finish_reason }],
          usage: { prompt_tokens: usage!.prompt_tokens, completion_tokens: usage!.completion_tokens },
        });
        const streamed = await openai.chat.completions.create({ ...body, stream: true }, cached).withResponse();
        expect(streamed.response.headers.get('x-sbc-cache')).toBe('hit');
        let text = '';
        for await (const chunk of streamed.data) {
          expect(chunk.id).toBe(first.data.id);
          text += chunk.choices[0]?.delta.content ?? '';
        }
        expect(text).toBe(first.data.choices[0]!.message.content);
      } finally {
        await running.stop();
      }
    },
    FIRST_START_MS,
  );

  it(
    'stored Responses live in the runs service’s PGlite: kept, continued, read back after a restart, deleted',
    async () => {
      const client = (url: string, key: string) => new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
      let running = await start(config());
      let ids: string[];
      try {
        const openai = client(running.url, running.bootstrap.key);
        const first = await openai.responses.create({ model: 'house', input: 'Remember me on PGlite' });
        const events = await openai.responses.create({
          model: 'house',
          input: 'And this',
          previous_response_id: first.id,
          stream: true,
        });
        let second: string | undefined;
        for await (const event of events) if (event.type === 'response.completed') second = event.response.id;
        ids = [first.id, second!];
      } finally {
        await running.stop();
      }
      running = await start(config());
      try {
        const openai = client(running.url, running.bootstrap.key);
        const kept = await openai.responses.retrieve(ids[1]!);
        expect(kept).toMatchObject({ id: ids[1], previous_response_id: ids[0], status: 'completed', store: true });
        const items = [];
        for await (const item of openai.responses.inputItems.list(ids[1]!, { order: 'asc' })) items.push(item);
        expect(items.map((item) => item.type)).toEqual(['message', 'message', 'message']);
        await openai.responses.delete(ids[0]!);
        expect(await openai.responses.retrieve(ids[0]!).catch((error: unknown) => error)).toBeInstanceOf(
          OpenAI.NotFoundError,
        );
      } finally {
        await running.stop();
      }
    },
    2 * FIRST_START_MS,
  );

  it('a bad variable stops the start with a message naming it', () => {
    expect(() => loadEmbeddedConfig({ ACCOUNT_DATABASE_URL: 'mysql://x', PORT: 'eighty' })).toThrow(
      /ACCOUNT_DATABASE_URL[\s\S]*PORT|PORT[\s\S]*ACCOUNT_DATABASE_URL/,
    );
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '@sbc/testing';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

const API_KEY = 'sk-upstream-secret-0123456789';
const HEADER_VALUE = 'header-secret-value-9876';
// For endpoints of users who are not operators, which may not aim at loopback: saved, and their probe fails.
const UNRESOLVABLE = 'http://endpoint.invalid';

/** A third-party endpoint that speaks only Anthropic's dialect (the sim answers both). */
async function anthropicOnlyEndpoint(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const anthropic = req.headers['x-api-key'] && req.headers['anthropic-version'];
    res.writeHead(anthropic ? 200 : 401, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        anthropic
          ? { data: [{ type: 'model', id: 'claude-x', display_name: 'Claude X' }], has_more: false }
          : { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('custom endpoints: /v1/upstreams', () => {
  let stack: AccountSurfaceStack;
  let closedUrl: string;
  beforeAll(async () => {
    stack = await startStack({ label: 'upstreams' });
    closedUrl = `http://127.0.0.1:${await freePort()}`;
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const create = (body: Record<string, unknown>, key = OWNER_KEY) =>
    stack.api('POST', '/v1/upstreams', { key, body: { api_key: API_KEY, ...body } });

  describe('probing', () => {
    it('an OpenAI endpoint is probed on create and its models fill the row', async () => {
      const answer = await create({ label: 'Sim as OpenAI', base_url: `${stack.sim.url}/v1`, dialect: 'openai' });
      expect(answer.status).toBe(201);
      expect(answer.body.probe).toMatchObject({ ok: true, models_found: 2, dialect: 'openai' });
      expect(answer.body.upstream).toMatchObject({
        slug: 'sim-as-openai',
        dialect: 'openai',
        dialect_setting: 'openai',
        models: ['sim-large', 'sim-small'],
      });
      expect(answer.body.upstream.probe).toEqual(answer.body.probe);
    });

    it('an Anthropic endpoint is probed in its dialect; its display names fill model_names', async () => {
      const answer = await create({ label: 'Sim as Anthropic', base_url: stack.sim.url, dialect: 'anthropic' });
      expect(answer.status).toBe(201);
      expect(answer.body.upstream).toMatchObject({
        dialect: 'anthropic',
        models: ['sim-large', 'sim-small'],
        model_names: { 'sim-large': 'sim-large (sim-upstream simulator)' },
      });
    });

    it('auto records the dialect that answered', async () => {
      const both = await create({ label: 'Sim auto', base_url: stack.sim.url });
      expect(both.body.upstream).toMatchObject({ dialect: 'openai', dialect_setting: 'auto' });
      const fake = await anthropicOnlyEndpoint();
      try {
        const anthropicOnly = await create({ label: 'Anthropic only', base_url: fake.url, dialect: 'auto' });
        expect(anthropicOnly.body.probe).toMatchObject({ ok: true, dialect: 'anthropic' });
        expect(anthropicOnly.body.upstream).toMatchObject({
          dialect: 'anthropic',
          dialect_setting: 'auto',
          models: ['claude-x'],
        });
        // Down for a moment: the failed probe keeps the dialect (and the models) it answered with.
        await new Promise((resolve) => fake.server.close(resolve));
        const down = await stack.api('POST', '/v1/upstreams/anthropic-only/probe', { key: OWNER_KEY });
        expect(down.body.probe).toMatchObject({ ok: false, dialect: 'anthropic' });
        expect(down.body.upstream).toMatchObject({ dialect: 'anthropic', models: ['claude-x'] });
      } finally {
        fake.server.close();
      }
    });

    it('a closed port still saves the endpoint, with probe.ok false and the reason', async () => {
      const answer = await create({ label: 'Down', base_url: closedUrl, models: ['my-model'] });
      expect(answer.status).toBe(201);
      expect(answer.body.probe).toMatchObject({
        ok: false,
        error: expect.stringMatching(/connection refused by 127\.0\.0\.1:\d+/),
      });
      expect(answer.body.upstream).toMatchObject({ slug: 'down', models: ['my-model'] });
      const list = await stack.api('GET', '/v1/upstreams?limit=100', { key: OWNER_KEY });
      expect(list.body.data.find((u: { slug: string }) => u.slug === 'down')).toMatchObject({ probe: { ok: false } });
      const probed = await stack.api('POST', '/v1/upstreams/down/probe', { key: OWNER_KEY });
      expect(probed.status).toBe(200);
      expect(probed.body.probe).toMatchObject({ ok: false });
    });

    it('POST …/probe re-reads the endpoint; models named by hand stay', async () => {
      await create({ label: 'Reprobe', base_url: stack.sim.url, dialect: 'openai', models: ['hand-made'] });
      const probed = await stack.api('POST', '/v1/upstreams/reprobe/probe', { key: OWNER_KEY });
      expect(probed.status).toBe(200);
      expect(probed.body).toMatchObject({
        probe: { ok: true, models_found: 2 },
        upstream: { models: ['sim-large', 'sim-small', 'hand-made'] },
      });
    });
  });

  describe('editing', () => {
    it('changing only the label does not re-probe; changing base_url does', async () => {
      const created = await create({ label: 'Movable', base_url: closedUrl, dialect: 'openai' });
      const relabelled = await stack.api('PATCH', '/v1/upstreams/movable', {
        key: OWNER_KEY,
        body: { label: 'Moved box' },
      });
      expect(relabelled.status).toBe(200);
      expect(relabelled.body.upstream).toMatchObject({ slug: 'movable', label: 'Moved box' });
      expect(relabelled.body.probe).toEqual(created.body.probe);

      const moved = await stack.api('PATCH', '/v1/upstreams/movable', {
        key: OWNER_KEY,
        body: { base_url: `${stack.sim.url}/v1` },
      });
      expect(moved.status).toBe(200);
      expect(moved.body.probe).toMatchObject({ ok: true, models_found: 2 });
      expect(moved.body.probe.at).not.toBe(created.body.probe.at);
      expect(moved.body.upstream).toMatchObject({
        base_url: `${stack.sim.url}/v1`,
        models: ['sim-large', 'sim-small'],
        probed_at: expect.any(String),
      });
    });

    it('models and model_names are replaced as given', async () => {
      await create({ label: 'Named', base_url: closedUrl, dialect: 'openai' });
      const answer = await stack.api('PATCH', '/v1/upstreams/named', {
        key: OWNER_KEY,
        body: { models: ['a', 'b'], model_names: { a: 'Model A' } },
      });
      expect(answer.body.upstream).toMatchObject({ models: ['a', 'b'], model_names: { a: 'Model A' } });
    });

    it('weight is 1 unless given, is set by an edit without a re-probe, and every endpoint shows it', async () => {
      const plain = await create({ label: 'Weighed', base_url: closedUrl, dialect: 'openai' });
      expect(plain.body.upstream.weight).toBe(1);
      const standby = await create({ label: 'Standby box', base_url: closedUrl, dialect: 'openai', weight: 0 });
      expect(standby.status).toBe(201);
      expect(standby.body.upstream.weight).toBe(0);
      const edited = await stack.api('PATCH', '/v1/upstreams/weighed', { key: OWNER_KEY, body: { weight: 40 } });
      expect(edited.status).toBe(200);
      expect(edited.body.upstream.weight).toBe(40);
      expect(edited.body.probe).toEqual(plain.body.probe);
      const list = await stack.api('GET', '/v1/upstreams?limit=100', { key: OWNER_KEY });
      const weights = Object.fromEntries(
        list.body.data.map((upstream: { slug: string; weight: number }) => [upstream.slug, upstream.weight]),
      );
      expect(weights).toMatchObject({ weighed: 40, 'standby-box': 0 });
    });
  });

  describe('secrets', () => {
    it('the API key is never returned and header values are redacted', async () => {
      const created = await create({
        label: 'Secretive',
        base_url: stack.sim.url,
        dialect: 'openai',
        headers: { 'x-team': HEADER_VALUE },
      });
      const patched = await stack.api('PATCH', '/v1/upstreams/secretive', {
        key: OWNER_KEY,
        body: { api_key: `${API_KEY}-2` },
      });
      const listed = await stack.api('GET', '/v1/upstreams?limit=100', { key: OWNER_KEY });
      expect(created.body.upstream.headers).toEqual({ 'x-team': '••••' });
      for (const answer of [created, patched, listed]) {
        const text = JSON.stringify(answer.body);
        expect(text).not.toContain(API_KEY);
        expect(text).not.toContain(HEADER_VALUE);
        expect(text).not.toContain('api_key');
      }
      const row = await stack.account.database.prisma.upstream.findFirst({ where: { slug: 'secretive' } });
      expect(Buffer.from(row!.apiKeyCiphertext!).toString('latin1')).not.toContain(API_KEY);
    });
  });

  describe('slugs', () => {
    it('derive from the label, unique per account; "Custom" gives the legacy singleton `custom`', async () => {
      const user = await stack.seedUser();
      const { secret } = await stack.seedKey({ userId: user });
      const first = await create({ label: 'Custom', base_url: UNRESOLVABLE }, secret);
      const second = await create({ label: 'custom', base_url: UNRESOLVABLE }, secret);
      expect([first.body.upstream.slug, second.body.upstream.slug]).toEqual(['custom', 'custom-2']);
      const taken = await create({ label: 'Anything', slug: 'custom', base_url: UNRESOLVABLE }, secret);
      expect(taken.status).toBe(409);
      expect(taken.body).toMatchObject({ error: 'conflict', param: 'slug' });
      const chosen = await create({ label: 'Anything', slug: 'legacy-box', base_url: UNRESOLVABLE }, secret);
      expect(chosen.body.upstream.slug).toBe('legacy-box');
    });
  });

  describe('listing', () => {
    it('pages newest first by row id; `upstreams` mirrors `data`', async () => {
      const user = await stack.seedUser();
      const { secret } = await stack.seedKey({ userId: user });
      for (const label of ['one', 'two', 'three']) await create({ label, base_url: UNRESOLVABLE }, secret);
      const first = await stack.api('GET', '/v1/upstreams?limit=2', { key: secret });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ object: 'list', has_more: true });
      expect(first.body.data.map((u: { slug: string }) => u.slug)).toEqual(['three', 'two']);
      expect(first.body.upstreams).toEqual(first.body.data);
      expect(first.body.first_id).toBe(first.body.data[0].id);
      const next = await stack.api('GET', `/v1/upstreams?limit=2&after_id=${first.body.last_id}`, { key: secret });
      expect(next.body).toMatchObject({ has_more: false, data: [{ slug: 'one' }] });
      const back = await stack.api('GET', `/v1/upstreams?limit=2&before_id=${next.body.first_id}`, { key: secret });
      expect(back.body.data.map((u: { slug: string }) => u.slug)).toEqual(['three', 'two']);
    });

    it('a signed-in session lists too', async () => {
      const session = await stack.seedSession();
      expect((await stack.api('GET', '/v1/upstreams', { key: session })).status).toBe(200);
    });
  });

  describe('routing', () => {
    it('a model on a new endpoint is routable through the edge at once', async () => {
      const call = () =>
        fetch(`${stack.edge.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${OWNER_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'fresh-box/sim-large', messages: [{ role: 'user', content: 'hello' }] }),
        });
      // The first call caches the account's routing table without the endpoint.
      expect((await call()).status).toBe(404);
      expect((await create({ label: 'Fresh box', base_url: stack.sim.url, dialect: 'openai' })).status).toBe(201);
      const answer = await call();
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { object: string }).object).toBe('chat.completion');
      expect((await stack.api('DELETE', '/v1/upstreams/fresh-box', { key: OWNER_KEY })).status).toBe(204);
      expect((await call()).status).toBe(404);
    });
  });

  describe('refusals', () => {
    it('DELETE removes the endpoint; a missing slug is 404 on every slug route', async () => {
      await create({ label: 'Doomed', base_url: closedUrl });
      const deleted = await stack.api('DELETE', '/v1/upstreams/doomed', { key: OWNER_KEY });
      expect(deleted.status).toBe(204);
      expect(await stack.account.database.prisma.upstream.count({ where: { slug: 'doomed' } })).toBe(0);
      for (const [method, path, body] of [
        ['DELETE', '/v1/upstreams/doomed', undefined],
        ['PATCH', '/v1/upstreams/doomed', { label: 'x' }],
        ['POST', '/v1/upstreams/doomed/probe', undefined],
      ] as const) {
        const answer = await stack.api(method, path, { key: OWNER_KEY, body });
        expect(answer.status).toBe(404);
        expect(answer.body).toMatchObject({ error: 'not_found', param: 'slug' });
      }
    });

    it("another account's slug is 404, never 403", async () => {
      await create({ label: 'Owned', base_url: closedUrl });
      const other = await stack.seedKey({ userId: await stack.seedUser() });
      for (const [method, path, body] of [
        ['DELETE', '/v1/upstreams/owned', undefined],
        ['PATCH', '/v1/upstreams/owned', { label: 'mine now' }],
        ['POST', '/v1/upstreams/owned/probe', undefined],
      ] as const) {
        expect((await stack.api(method, path, { key: other.secret, body })).status).toBe(404);
      }
      const list = await stack.api('GET', '/v1/upstreams', { key: other.secret });
      expect(list.body.data).toEqual([]);
    });

    it('invalid bodies and queries are 400 invalid_request naming the field', async () => {
      const missing = await stack.api('POST', '/v1/upstreams', { key: OWNER_KEY, body: { label: 'x', api_key: 'k' } });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ error: 'invalid_request', param: 'base_url' });
      const badUrl = await create({ label: 'x', base_url: 'ftp://example.com' });
      expect(badUrl.body).toMatchObject({ error: 'invalid_request', param: 'base_url' });
      const unknown = await create({ label: 'x', base_url: closedUrl, surprise: true });
      expect(unknown.status).toBe(400);
      await create({ label: 'Patchable', base_url: closedUrl });
      const badDialect = await stack.api('PATCH', '/v1/upstreams/patchable', {
        key: OWNER_KEY,
        body: { dialect: 'cohere' },
      });
      expect(badDialect.body).toMatchObject({ error: 'invalid_request', param: 'dialect' });
      for (const weight of [-1, 101, 1.5, '3', null, true]) {
        const created = await create({ label: 'Badly weighed', base_url: closedUrl, weight });
        expect({ weight, status: created.status, body: created.body }).toMatchObject({
          weight,
          status: 400,
          body: { error: 'invalid_request', param: 'weight' },
        });
        const edited = await stack.api('PATCH', '/v1/upstreams/patchable', { key: OWNER_KEY, body: { weight } });
        expect({ weight, status: edited.status, body: edited.body }).toMatchObject({
          weight,
          status: 400,
          body: { error: 'invalid_request', param: 'weight' },
        });
      }
      const untouched = await stack.api('GET', '/v1/upstreams?limit=100', { key: OWNER_KEY });
      const slugs = untouched.body.data.map((upstream: { slug: string }) => upstream.slug);
      expect(slugs).not.toContain('badly-weighed');
      expect(untouched.body.data.find((upstream: { slug: string }) => upstream.slug === 'patchable').weight).toBe(1);
      const bothCursors = await stack.api('GET', '/v1/upstreams?after_id=a&before_id=b', { key: OWNER_KEY });
      expect(bothCursors.status).toBe(400);
    });

    it.each([
      ['GET', '/v1/upstreams', 'endpoints:read'],
      ['POST', '/v1/upstreams', 'endpoints:write'],
      ['PATCH', '/v1/upstreams/some', 'endpoints:write'],
      ['DELETE', '/v1/upstreams/some', 'endpoints:write'],
      ['POST', '/v1/upstreams/some/probe', 'endpoints:write'],
    ] as const)('%s %s: 401 without a credential, 403 insufficient_scope without %s', async (method, path, scope) => {
      const body =
        method === 'POST' || method === 'PATCH' ? { label: 'x', base_url: closedUrl, api_key: 'k' } : undefined;
      const anonymous = await stack.api(method, path, { body });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error).toBe('unauthorized');
      const narrow = await stack.seedKey({
        scopes: scope === 'endpoints:read' ? ['gateway:invoke'] : ['endpoints:read'],
      });
      const refused = await stack.api(method, path, { key: narrow.secret, body });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'insufficient_scope', required_scopes: [scope] });
    });
  });
});

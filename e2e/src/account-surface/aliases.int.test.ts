import { get, type IncomingMessage } from 'node:http';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

interface SseEvent {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/**
 * Opens an event stream on its own connection (no pooled keep-alive socket outlives it) and reads its events
 * one at a time.
 */
async function openEvents(url: string, key: string) {
  const res = await new Promise<IncomingMessage>((resolve, reject) =>
    get(url, { headers: { authorization: `Bearer ${key}` }, agent: false }, resolve).on('error', reject),
  );
  res.setEncoding('utf8');
  const lines = res[Symbol.asyncIterator]();
  let buffer = '';
  return {
    status: res.statusCode,
    contentType: res.headers['content-type'] ?? '',
    async next(): Promise<SseEvent> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(
            block
              .split('\n')
              .filter((line) => !line.startsWith(':'))
              .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
          );
          if (fields.event)
            return {
              event: fields.event,
              id: fields.id,
              data: JSON.parse(fields.data ?? '{}') as Record<string, unknown>,
            };
          continue;
        }
        const { value, done } = (await lines.next()) as IteratorResult<string>;
        if (done) throw new Error('the event stream ended');
        buffer += value;
      }
    },
    close: () => res.destroy(),
  };
}

describe('aliases: /v1/aliases', () => {
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    stack = await startStack({ label: 'aliases' });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const put = (token: string, body: Record<string, unknown>, key = OWNER_KEY) =>
    stack.api('PUT', `/v1/aliases/${encodeURIComponent(token)}`, { key, body });

  it('PUT, GET and DELETE move the revision up; the token works with or without "@"', async () => {
    const { secret } = await stack.seedKey({ userId: await stack.seedUser() });
    const first = await put('@Work', { vendor: 'anthropic', model_id: 'claude-sonnet-5-5' }, secret);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ok: true, token: '@work', rev: 1 });
    const second = await put(
      'work',
      { vendor: 'openai', model_id: 'gpt-6-luna', label: 'Work model', custody: 'device-held' },
      secret,
    );
    expect(second.body).toMatchObject({ ok: true, token: '@work', rev: 2 });

    const list = await stack.api('GET', '/v1/aliases', { key: secret });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-alias-rev')).toBe('2');
    expect(list.body[0]).toEqual({
      token: '@work',
      vendor: 'openai',
      model_id: 'gpt-6-luna',
      label: 'Work model',
      tier: expect.any(String),
      custody: 'device-held',
      available: expect.any(Boolean),
      source: 'personal',
      rev: 2,
    });

    const deleted = await stack.api('DELETE', '/v1/aliases/%40work', { key: secret });
    expect(deleted.body).toEqual({ ok: true, token: '@work', rev: 3, request_id: expect.any(String) });
    const again = await stack.api('DELETE', '/v1/aliases/work', { key: secret });
    expect(again.body).toMatchObject({ ok: true, token: '@work', rev: 3 });
    const after = await stack.api('GET', '/v1/aliases', { key: secret });
    expect(after.body.some((alias: { source: string }) => alias.source === 'personal')).toBe(false);
  });

  it('lists own aliases, then built-in ones a personal alias does not shadow, then the catalog', async () => {
    const { secret } = await stack.seedKey({ userId: await stack.seedUser() });
    await put('claude', { vendor: 'anthropic', model_id: 'claude-haiku-4-5' }, secret);
    const list = await stack.api('GET', '/v1/aliases', { key: secret });
    const sources = list.body.map((alias: { source: string }) => alias.source);
    expect(sources.indexOf('built_in')).toBeGreaterThan(sources.lastIndexOf('personal'));
    expect(sources.indexOf('catalog')).toBeGreaterThan(sources.lastIndexOf('built_in'));
    const claude = list.body.filter((alias: { token: string }) => alias.token === '@claude');
    expect(claude).toEqual([expect.objectContaining({ source: 'personal', model_id: 'claude-haiku-4-5' })]);
    // The stack's edge has a house engine for `house` only, and no provider engines.
    expect(list.body.find((alias: { token: string }) => alias.token === '@house')).toMatchObject({
      source: 'built_in',
      available: true,
    });
    expect(list.body.find((alias: { token: string }) => alias.token === '@gpt')).toMatchObject({ available: false });
    expect(list.body.find((alias: { token: string }) => alias.token === '@gpt-6-luna')).toMatchObject({
      source: 'catalog',
      vendor: 'openai',
    });
  });

  it("a model listed by one of the caller's endpoints makes its alias available", async () => {
    const userId = await stack.seedUser();
    const { secret } = await stack.seedKey({ userId });
    // Seeded as saved: a user who is not an operator may not save an endpoint on loopback, where the sim is.
    await stack.account.routing.saveUpstream({
      userId,
      slug: 'sim',
      label: 'sim',
      baseUrl: stack.sim.url,
      dialect: 'openai',
      apiKey: '',
      models: ['sim-large', 'sim-small'],
    });
    await put('big', { vendor: 'sim', model_id: 'sim-large' }, secret);
    await put('nowhere', { vendor: 'sim', model_id: 'not-listed' }, secret);
    const list = await stack.api('GET', '/v1/aliases', { key: secret });
    expect(list.body.find((alias: { token: string }) => alias.token === '@big')).toMatchObject({ available: true });
    expect(list.body.find((alias: { token: string }) => alias.token === '@nowhere')).toMatchObject({
      available: false,
    });
  });

  it("without model_id the token names the model (a built-in alias's, else itself)", async () => {
    const { secret } = await stack.seedKey({ userId: await stack.seedUser() });
    await put('@fast', { vendor: 'house', custody: 'device-held' }, secret);
    await put('gpt-6-luna', { vendor: 'openai' }, secret);
    const list = await stack.api('GET', '/v1/aliases', { key: secret });
    expect(list.body.slice(0, 2)).toEqual([
      expect.objectContaining({ token: '@fast', model_id: 'house-fast', custody: 'device-held' }),
      expect.objectContaining({ token: '@gpt-6-luna', model_id: 'gpt-6-luna', label: expect.any(String) }),
    ]);
  });

  it('paired devices hear of changes on GET /v1/aliases/events', async () => {
    const user = await stack.seedUser();
    const { secret } = await stack.seedKey({ userId: user });
    await put('before', { vendor: 'openai', model_id: 'gpt-6-luna' }, secret);
    const other = await stack.seedKey({ userId: await stack.seedUser() });

    const stream = await openEvents(`${stack.edge.url}/v1/aliases/events?since_rev=0`, secret);
    try {
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      stack.contract.check('GET', '/v1/aliases/events', stream.status!, '', stream.contentType);
      expect(await stream.next()).toEqual({ event: 'alias.sync', id: undefined, data: { rev: 1, stale: true } });

      // Another account's change is not relayed; this account's are, in order.
      await put('theirs', { vendor: 'openai', model_id: 'gpt-6-luna' }, other.secret);
      await put('@Mine', { vendor: 'anthropic', model_id: 'claude-opus-5-5' }, secret);
      expect(await stream.next()).toEqual({
        event: 'alias.changed',
        id: '2',
        data: { token: '@mine', rev: 2, deleted: false },
      });
      await stack.api('DELETE', '/v1/aliases/mine', { key: secret });
      expect(await stream.next()).toEqual({
        event: 'alias.changed',
        id: '3',
        data: { token: '@mine', rev: 3, deleted: true },
      });
    } finally {
      stream.close();
    }

    const current = await openEvents(`${stack.edge.url}/v1/aliases/events?since_rev=3`, secret);
    try {
      expect(await current.next()).toMatchObject({ event: 'alias.sync', data: { rev: 3, stale: false } });
    } finally {
      current.close();
    }
  });

  describe('refusals', () => {
    it('a bad token or body is 400 invalid_request naming the field', async () => {
      const badToken = await put('no spaces', { vendor: 'openai' });
      expect(badToken.status).toBe(400);
      expect(badToken.body).toMatchObject({ error: 'invalid_request', param: 'token' });
      const noVendor = await put('ok', { model_id: 'gpt-6-luna' });
      expect(noVendor.body).toMatchObject({ error: 'invalid_request', param: 'vendor' });
      const badCustody = await put('ok', { vendor: 'openai', custody: 'cloud' });
      expect(badCustody.body).toMatchObject({ error: 'invalid_request', param: 'custody' });
      const badSince = await stack.api('GET', '/v1/aliases/events?since_rev=-1', { key: OWNER_KEY });
      expect(badSince.body).toMatchObject({ error: 'invalid_request', param: 'since_rev' });
    });

    it.each([
      ['GET', '/v1/aliases', 'endpoints:read'],
      ['GET', '/v1/aliases/events', 'endpoints:read'],
      ['PUT', '/v1/aliases/x', 'endpoints:write'],
      ['DELETE', '/v1/aliases/x', 'endpoints:write'],
    ] as const)('%s %s: 401 without a credential, 403 insufficient_scope without %s', async (method, path, scope) => {
      const body = method === 'PUT' ? { vendor: 'openai' } : undefined;
      const anonymous = await stack.api(method, path, { body });
      expect(anonymous.status).toBe(401);
      const narrow = await stack.seedKey({
        scopes: scope === 'endpoints:read' ? ['gateway:invoke'] : ['endpoints:read'],
      });
      const refused = await stack.api(method, path, { key: narrow.secret, body });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'insufficient_scope', required_scopes: [scope] });
    });
  });
});

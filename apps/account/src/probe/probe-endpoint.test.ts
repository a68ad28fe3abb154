import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy } from '@sbc/egress';
import { createProber, parseModelList, preferredDialects, type Prober } from './probe-endpoint';

// Fakes of third-party endpoints: each answers GET /v1/models the way one kind of server does.
async function fakeEndpoint(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; seen: IncomingMessage[]; server: Server }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** Answers only Anthropic-style requests, paging two models per page as Anthropic's API does. */
const anthropicOnly = (req: IncomingMessage, res: ServerResponse) => {
  if (!req.headers['x-api-key'] || req.headers['anthropic-version'] !== '2023-06-01') {
    json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } });
    return;
  }
  const after = new URL(req.url!, 'http://x').searchParams.get('after_id');
  const page = after
    ? [{ id: 'claude-c', display_name: 'Claude C' }]
    : [
        { id: 'claude-a', display_name: 'Claude A' },
        { id: 'claude-b', display_name: 'Claude B' },
      ];
  json(res, 200, {
    data: page.map((m) => ({ type: 'model', ...m })),
    has_more: !after,
    first_id: page[0]!.id,
    last_id: page.at(-1)!.id,
  });
};

describe('probing an endpoint', () => {
  let prober: Prober;
  const servers: Server[] = [];
  beforeAll(() => {
    // The probe's whole budget: its model-list GETs and one-token calls share it, so on a machine busy with
    // the rest of the suite 0.3 s was not always enough for answers that were on their way (the silent-server
    // case below waits it out once).
    prober = createProber({ timeoutMs: 3_000, egress: createEgressPolicy({ privateEgress: 'operators' }) });
  });
  afterAll(() => {
    for (const server of servers) server.close();
  });
  const start = async (handler: Parameters<typeof fakeEndpoint>[0]) => {
    const fake = await fakeEndpoint(handler);
    servers.push(fake.server);
    return fake;
  };

  it('an OpenAI endpoint is dialed at {base}/v1/models with a Bearer key and its own headers', async () => {
    const fake = await start((_req, res) =>
      json(res, 200, {
        object: 'list',
        data: [
          { id: 'm1', object: 'model' },
          { id: 'm2', object: 'model' },
        ],
      }),
    );
    const report = await prober.probe({
      baseUrl: `${fake.url}/v1`,
      dialect: 'openai',
      apiKey: 'sk-1',
      headers: { 'x-org': 'o' },
      dialAs: 'operator',
    });
    expect(report).toMatchObject({ ok: true, dialect: 'openai', models: ['m1', 'm2'] });
    expect(fake.seen[0]!.url).toBe('/v1/models');
    expect(fake.seen[0]!.headers).toMatchObject({ authorization: 'Bearer sk-1', 'x-org': 'o' });
  });

  it(
    'an Anthropic endpoint is dialed with x-api-key and ' + 'anthropic-version, every page read, display names kept',
    async () => {
      const fake = await start(anthropicOnly);
      const report = await prober.probe({
        baseUrl: fake.url,
        dialect: 'anthropic',
        apiKey: 'sk-ant',
        headers: {},
        dialAs: 'operator',
      });
      expect(report).toMatchObject({
        ok: true,
        dialect: 'anthropic',
        models: ['claude-a', 'claude-b', 'claude-c'],
        modelNames: { 'claude-a': 'Claude A' },
      });
      expect(fake.seen[0]!.headers.authorization).toBeUndefined();
    },
  );

  it('auto records the dialect that answered', async () => {
    const fake = await start(anthropicOnly);
    const report = await prober.probe({
      baseUrl: fake.url,
      dialect: 'auto',
      apiKey: 'k',
      headers: {},
      dialAs: 'operator',
    });
    expect(report).toMatchObject({ ok: true, dialect: 'anthropic' });
  });

  it(
    'auto takes an endpoint that answers both probes with ' + 'an Anthropic-shaped list as Anthropic, and says why',
    async () => {
      const fake = await start((_req, res) =>
        json(res, 200, {
          data: [{ type: 'model', id: 'claude-x', display_name: 'Claude X', created_at: '2025-02-19T00:00:00Z' }],
          has_more: false,
        }),
      );
      const report = await prober.probe({
        baseUrl: fake.url,
        dialect: 'auto',
        apiKey: 'k',
        headers: {},
        dialAs: 'operator',
      });
      expect(report).toMatchObject({
        ok: true,
        dialect: 'anthropic',
        models: ['claude-x'],
        dialectReason: expect.stringContaining("Anthropic's shape"),
      });
      expect(fake.seen.every((req) => req.method === 'GET')).toBe(true);
    },
  );

  it(
    'auto sends a one-token call in each dialect when ' + 'the list names neither, and takes the one answered',
    async () => {
      const fake = await start((req, res) => {
        if (req.method === 'GET') return json(res, 200, { data: [{ id: 'local-model' }] });
        if (req.url === '/v1/messages')
          return json(res, 200, {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            content: [],
            stop_reason: 'max_tokens',
            usage: {},
          });
        return json(res, 404, { error: { message: 'no such route' } });
      });
      const report = await prober.probe({
        baseUrl: fake.url,
        dialect: 'auto',
        apiKey: 'k',
        headers: {},
        dialAs: 'operator',
      });
      expect(report).toMatchObject({
        ok: true,
        dialect: 'anthropic',
        dialectReason: expect.stringContaining('answered on /v1/messages only'),
      });
      const calls = fake.seen
        .filter((req) => req.method === 'POST')
        .map((req) => req.url)
        .sort();
      expect(calls).toEqual(['/v1/chat/completions', '/v1/messages']);
    },
  );

  it("a refusal is a report with the status and the endpoint's own message", async () => {
    const fake = await start(anthropicOnly);
    const report = await prober.probe({
      baseUrl: fake.url,
      dialect: 'openai',
      apiKey: 'k',
      headers: {},
      dialAs: 'operator',
    });
    expect(report.ok).toBe(false);
    expect(report.error).toMatch(/answered HTTP 401: x-api-key header is required/);
  });

  it('a body that is not a model list is a failed probe', async () => {
    const fake = await start((_req, res) => json(res, 200, { hello: 'world' }));
    const report = await prober.probe({
      baseUrl: fake.url,
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'operator',
    });
    expect(report).toMatchObject({ ok: false, error: expect.stringMatching(/did not answer with a model list/) });
  });

  it('a closed port and a silent server fail with a readable reason', async () => {
    const fake = await start(() => undefined);
    const closed = await start(() => undefined);
    await new Promise((resolve) => closed.server.close(resolve));
    const refused = await prober.probe({
      baseUrl: closed.url,
      dialect: 'auto',
      apiKey: '',
      headers: {},
      dialAs: 'operator',
    });
    expect(refused).toMatchObject({
      ok: false,
      models: [],
      error: expect.stringMatching(/^connection refused by 127\.0\.0\.1:\d+$/),
    });
    const silent = await prober.probe({
      baseUrl: fake.url,
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'operator',
    });
    expect(silent).toMatchObject({ ok: false, error: expect.stringMatching(/did not answer within 3 s/) });
  });

  it('a non-JSON error body is named by status and content type, never copied; a JSON message is bounded', async () => {
    const page = await start((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html>internal admin console: secret-token-123</html>');
    });
    const html = await prober.probe({
      baseUrl: page.url,
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'operator',
    });
    expect(html.error).toMatch(/answered HTTP 500 \(text\/html\)$/);
    expect(html.error).not.toMatch(/secret-token|admin console/);
    const okPage = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('internal status: secret-token-456');
    });
    const plain = await prober.probe({
      baseUrl: okPage.url,
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'operator',
    });
    expect(plain.error).toMatch(/did not answer with a model list \(HTTP 200, text\/plain\)$/);
    expect(plain.error).not.toMatch(/secret-token/);
    const chatty = await start((_req, res) => json(res, 400, { error: { message: 'x'.repeat(5_000) } }));
    const long = await prober.probe({
      baseUrl: chatty.url,
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'operator',
    });
    expect(long.error!.length).toBeLessThan(300);
  });

  it("a tenant's loopback endpoint is refused without being dialed, by address or by name", async () => {
    const fake = await start((_req, res) => json(res, 200, { data: [] }));
    const literal = await prober.probe({
      baseUrl: fake.url,
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'tenant',
    });
    const named = await prober.probe({
      baseUrl: fake.url.replace('127.0.0.1', 'localhost'),
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'tenant',
    });
    expect(literal).toMatchObject({ ok: false, error: expect.stringMatching(/loopback or private/) });
    expect(named).toMatchObject({ ok: false, error: expect.stringMatching(/loopback or private/) });
    expect(fake.seen).toHaveLength(0);
  });

  it('a name that resolves inward when the probe dials is refused (DNS rebinding)', async () => {
    const fake = await start((_req, res) => json(res, 200, { data: [{ id: 'internal' }] }));
    let answer = '8.8.8.8';
    const egress = createEgressPolicy({
      privateEgress: 'operators',
      resolve: async () => [{ address: answer, family: 4 }],
    });
    const url = fake.url.replace('127.0.0.1', 'rebind.test');
    await expect(egress.refusal(url, 'tenant')).resolves.toBeUndefined();
    answer = '127.0.0.1';
    const report = await createProber({ timeoutMs: 300, egress }).probe({
      baseUrl: url,
      dialect: 'openai',
      apiKey: '',
      headers: {},
      dialAs: 'tenant',
    });
    expect(report).toMatchObject({
      ok: false,
      error: expect.stringMatching(/rebind\.test is a loopback or private address/),
    });
    expect(fake.seen).toHaveLength(0);
  });
});

describe('model lists', () => {
  it("both dialects' shapes are read; anything else is not a list", () => {
    expect(parseModelList({ object: 'list', data: [{ id: 'a' }] })).toMatchObject({ ids: ['a'], hasMore: false });
    expect(parseModelList({ data: [{ id: 'b', display_name: 'B' }], has_more: true, last_id: 'b' })).toMatchObject({
      ids: ['b'],
      names: { b: 'B' },
      hasMore: true,
      lastId: 'b',
    });
    expect(parseModelList({ data: [{ name: 'x' }] })).toBeUndefined();
    expect(parseModelList([{ id: 'a' }])).toBeUndefined();
  });

  it('auto prefers Anthropic only for a host that names it', () => {
    expect(preferredDialects('https://api.anthropic.com')).toEqual(['anthropic', 'openai']);
    expect(preferredDialects('http://127.0.0.1:8090/v1')).toEqual(['openai', 'anthropic']);
  });
});

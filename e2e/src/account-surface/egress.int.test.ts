import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { systemResolver, type Resolver } from '@sbc/egress';
import { rejectionOf } from '@sbc/testing';
import { SIM_TOKENS_PER_SECOND } from '../support/run-events';
import { OWNER_KEY, startStack, type AccountSurfaceStack, type RunsStack } from '../support/stack';

const BASE_URL = 'https://gw.test';
const INTERNAL_SECRET = 'internal-dashboard-secret-7731';

/**
 * A model server on loopback, the kind an owner runs next to the gateway: lists `tiny`, answers chat
 * completions, and for the model `html-error` answers the way an internal web page would.
 */
async function startLocalModelServer(): Promise<{ port: number; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'list',
            data: [
              { id: 'tiny', object: 'model' },
              { id: 'html-error', object: 'model' },
            ],
          }),
        );
        return;
      }
      const { model } = JSON.parse(body || '{}') as { model?: string };
      if (model === 'html-error') {
        res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<html><body><h1>Admin</h1><p>${INTERNAL_SECRET}</p></body></html>`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-local',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [
            { index: 0, message: { role: 'assistant', content: 'hello from the local server' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen, server };
}

/** Every spelling of an inward address the issue lists, on the local server's port where one applies. */
function inwardSpellings(port: number, edgeUrl: string): string[] {
  return [
    `http://127.0.0.1:${port}/v1`,
    `http://localhost:${port}/v1`,
    `http://[::ffff:127.0.0.1]:${port}/v1`,
    `http://[::127.0.0.1]:${port}/v1`,
    `http://[64:ff9b::7f00:1]:${port}/v1`,
    `http://2130706433:${port}/v1`,
    `http://0x7f.1:${port}/v1`,
    `http://017700000001:${port}/v1`,
    'http://192.0.2.10/v1',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.8/v1',
    `${edgeUrl}/v1`,
    `${BASE_URL}/v1`,
  ];
}

describe('egress: what a tenant can aim the gateway at, and what the owner still can', () => {
  let stack: AccountSurfaceStack;
  let local: Awaited<ReturnType<typeof startLocalModelServer>>;
  let tenantKey: string;
  // `rebind.test` resolves to the local server, as a name pointed inward after it was saved would.
  const resolve: Resolver = async (hostname) =>
    hostname === 'rebind.test' ? [{ address: '127.0.0.1', family: 4 }] : systemResolver(hostname);

  beforeAll(async () => {
    local = await startLocalModelServer();
    stack = await startStack({
      label: 'egress',
      accountEnv: { SBC_SIGNUP_ENABLED: 'true', BASE_URL },
      egressResolve: resolve,
    });
    // A fresh sign-up, as anyone on the internet can make one.
    const email = `tenant.${Date.now()}@example.test`;
    expect(
      (await stack.api('POST', '/v1/auth/signup', { body: { email, password: 'correct horse battery staple' } }))
        .status,
    ).toBe(201);
    const session = await stack.api('POST', '/v1/auth/sessions', {
      body: { email, password: 'correct horse battery staple' },
    });
    const minted = await stack.api('POST', '/v1/keys', {
      key: session.body.token,
      body: { name: 'tenant', preset: 'full_access' },
    });
    expect(minted.status).toBe(201);
    tenantKey = minted.body.key;
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await new Promise((done) => local?.server.close(done));
  });

  const openAi = (key: string) => new OpenAI({ apiKey: key, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 });
  const create = (key: string, body: Record<string, unknown>) =>
    stack.api('POST', '/v1/upstreams', { key, body: { api_key: 'sk-local', ...body } });

  it(
    'a fresh sign-up cannot save an endpoint at any inward spelling (400 invalid_request, param base_url), and ' +
      'nothing is saved',
    async () => {
      const answers: Array<{ url: string; status: number; error?: string; param?: string }> = [];
      for (const url of inwardSpellings(local.port, stack.edge.url)) {
        const answer = await create(tenantKey, { label: 'Inward', base_url: url });
        answers.push({ url, status: answer.status, error: answer.body.error, param: answer.body.param });
      }
      expect(answers).toEqual(
        answers.map(({ url }) => ({ url, status: 400, error: 'invalid_request', param: 'base_url' })),
      );
      expect((await stack.api('GET', '/v1/upstreams', { key: tenantKey })).body.data).toEqual([]);
      expect(local.seen).toEqual([]);
    },
  );

  it('a fresh sign-up cannot move a saved endpoint inward either', async () => {
    const saved = await create(tenantKey, {
      label: 'Movable',
      base_url: 'http://movable.invalid/v1',
      models: ['tiny'],
    });
    expect(saved.status).toBe(201);
    const moved = await stack.api('PATCH', '/v1/upstreams/movable', {
      key: tenantKey,
      body: { base_url: `http://[::ffff:127.0.0.1]:${local.port}/v1` },
    });
    expect(moved.status).toBe(400);
    expect(moved.body).toMatchObject({ error: 'invalid_request', param: 'base_url' });
    await stack.api('DELETE', '/v1/upstreams/movable', { key: tenantKey });
  });

  it('the owner adds a model server on localhost and calls it with the OpenAI SDK', async () => {
    const saved = await create(OWNER_KEY, { label: 'Local', base_url: `http://localhost:${local.port}/v1` });
    expect(saved.status).toBe(201);
    expect(saved.body.probe).toMatchObject({ ok: true, models_found: 2 });
    const reply = await openAi(OWNER_KEY).chat.completions.create({
      model: 'local/tiny',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(reply.choices[0]!.message.content).toBe('hello from the local server');
  });

  it(
    'a name that passed when saved and resolves inward when dialed is refused for a tenant, not for the owner (DNS ' +
      'rebinding)',
    async () => {
      const url = `http://rebind.test:${local.port}/v1`;
      // The account service's resolver does not know the name: the write passes and the probe finds no host.
      const saved = await create(tenantKey, { label: 'Rebind', base_url: url, models: ['tiny'] });
      expect(saved.status).toBe(201);
      const before = local.seen.length;
      const refused = await rejectionOf(
        openAi(tenantKey).chat.completions.create({
          model: 'rebind/tiny',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect(refused).toMatchObject({
        status: 502,
        message: expect.stringMatching(/not dialed: rebind\.test is a loopback or private address/),
      });
      expect(local.seen.length).toBe(before);
      // The same name works for the owner, so the refusal above was the policy and not a dead address.
      expect((await create(OWNER_KEY, { label: 'Rebind', base_url: url, models: ['tiny'] })).status).toBe(201);
      const reply = await openAi(OWNER_KEY).chat.completions.create({
        model: 'rebind/tiny',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(reply.choices[0]!.message.content).toBe('hello from the local server');
    },
  );

  it("an upstream's non-JSON error body is never echoed: the caller reads its status and content type", async () => {
    const failed = await rejectionOf(
      openAi(OWNER_KEY).chat.completions.create({
        model: 'local/html-error',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((failed as Error).message).toMatch(/not JSON \(text\/html\)/);
    expect(JSON.stringify((failed as InstanceType<typeof OpenAI.APIError>).error)).not.toContain(INTERNAL_SECRET);
    expect((failed as Error).message).not.toContain(INTERNAL_SECRET);
  });

  it(
    'a call through the gateway cannot come back into it: an endpoint at the edge is not dialed, and a marked call ' +
      'is refused',
    async () => {
      // The owner may use loopback, but not the edge itself (found by the address it is reached at).
      const edgePort = new URL(stack.edge.url).port;
      expect(
        (await create(OWNER_KEY, { label: 'Loop', base_url: `http://localhost:${edgePort}/v1`, models: ['house'] }))
          .status,
      ).toBe(201);
      const looped = await rejectionOf(
        openAi(OWNER_KEY).chat.completions.create({ model: 'loop/house', messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(looped).toMatchObject({ status: 502, message: expect.stringMatching(/this gateway's own address/) });
      // Whatever address reaches it, a call an edge sent upstream carries the hop mark and is refused at once.
      const marked = await fetch(`${stack.edge.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OWNER_KEY}`, 'content-type': 'application/json', 'x-sbc-hop': '1' },
        body: JSON.stringify({ model: 'house', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(marked.status).toBe(400);
      expect(await marked.json()).toMatchObject({
        error: { type: 'invalid_request_error', message: expect.stringMatching(/came from this gateway itself/) },
      });
    },
  );
});

describe('egress: webhooks', () => {
  let stack: RunsStack;
  beforeAll(async () => {
    // The runs service as deployed: its default, not the loopback-friendly setting the other runs tests use.
    stack = await startStack({
      label: 'egress_webhooks',
      simTokensPerSecond: SIM_TOKENS_PER_SECOND,
      runs: { env: { EGRESS_PRIVATE: 'operators', BASE_URL } },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it(
    'a new account cannot register a webhook at any inward spelling (400 invalid_request, param url); a public one ' +
      'is accepted',
    async () => {
      const user = await stack.seedUser();
      const { secret } = await stack.seedKey({ userId: user, scopes: ['runs:write', 'runs:read'] });
      const answers: Array<{ url: string; status: number; error?: string; param?: string }> = [];
      for (const url of inwardSpellings(9, stack.edge.url)) {
        const answer = await stack.api('POST', '/v1/webhooks', { key: secret, body: { url: `${url}/hook` } });
        answers.push({ url, status: answer.status, error: answer.body.error, param: answer.body.param });
      }
      expect(answers).toEqual(answers.map(({ url }) => ({ url, status: 400, error: 'invalid_request', param: 'url' })));
      const accepted = await stack.api('POST', '/v1/webhooks', {
        key: secret,
        body: { url: 'https://hooks.example.invalid/sbc' },
      });
      expect(accepted.status).toBe(201);
    },
  );

  it(
    'the owner, an operator, may register a webhook receiver ' +
      'on loopback; never the link-local or documentation ranges',
    async () => {
      const ownHook = await stack.api('POST', '/v1/webhooks', {
        key: OWNER_KEY,
        body: { url: 'http://127.0.0.1:9/hook' },
      });
      expect(ownHook.status).toBe(201);
      for (const url of ['http://169.254.169.254/hook', 'http://192.0.2.10/hook']) {
        const refused = await stack.api('POST', '/v1/webhooks', { key: OWNER_KEY, body: { url } });
        expect({ url, status: refused.status, param: refused.body.param }).toEqual({ url, status: 400, param: 'url' });
      }
    },
  );
});

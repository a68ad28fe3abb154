import { SCOPES } from '@sbc/scopes';
import { createMemoryPubSub, type PubSub } from '@sbc/cache';
import { createTestDatabase, testBackends, type TestDatabase, jsonOf } from '@sbc/testing';
import type { RunningAccount } from '@sbc/app-account';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { startTestAccount } from '../support/test-account';

const KEY = 'sbc_test_bootstrap_key_0123456789abcdef';

describe('gateway authentication against the account service', () => {
  let db: TestDatabase;
  let pubsub: PubSub | undefined;
  let account: RunningAccount;
  let gatewayA: RunningGateway;
  let gatewayB: RunningGateway;
  const redisUrl = testBackends().redisUrl;

  async function gateway(extra: Record<string, string> = {}): Promise<RunningGateway> {
    return startGateway(
      loadGatewayConfig({
        PORT: '0',
        BASE_URL: 'https://gw.test',
        ACCOUNT_GRPC_TARGET: account.grpcAddress,
        REDIS_URL: redisUrl,
        // Long enough that only a revocation broadcast can explain a revoked key being refused in a test.
        AUTH_CACHE_FRESH_MS: '600000',
        KEY_USE_FLUSH_MS: '50',
        LOG_LEVEL: 'silent',
        USAGE_EVENTS: 'off',
        ...extra,
      }),
      { pubsub },
    );
  }

  beforeAll(async () => {
    db = await createTestDatabase('gateway_auth');
    // Two edge replicas share revocations through Redis when the run has one, else an in-process channel.
    pubsub = redisUrl ? undefined : createMemoryPubSub();
    account = await startTestAccount({ databaseUrl: db.databaseUrl, redisUrl, pubsub, bootstrapKey: KEY });
    gatewayA = await gateway();
    gatewayB = await gateway();
  });

  afterAll(async () => {
    await gatewayA?.stop();
    await gatewayB?.stop();
    await account?.stop();
    await pubsub?.close();
    await db?.drop();
  });

  const whoami = (gw: RunningGateway, headers: Record<string, string>) =>
    fetch(`${gw.url}/v1/keys/whoami`, { headers });

  it('whoami returns the calling key as a CallerKey, with the request id in header and body', async () => {
    const res = await whoami(gatewayA, { authorization: `Bearer ${KEY}` });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({
      id: expect.stringMatching(/^key_/),
      user_id: expect.stringMatching(/^usr_/),
      name: 'bootstrap',
      mask: `${KEY.slice(0, 8)}…${KEY.slice(-4)}`,
      route: 'auto',
      mode: 'model',
      incognito: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // The bootstrap owner is the operator: its Full access key holds every scope, audit:read included.
    expect(body.scopes).toEqual([...SCOPES]);
    expect(body.revoked_at).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain(KEY);
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('accepts the key in x-api-key, as messages-dialect clients send it', async () => {
    const res = await whoami(gatewayA, { 'x-api-key': KEY });
    expect(res.status).toBe(200);
  });

  it('a request without a key is 401 unauthorized in the envelope, keeping the caller request id', async () => {
    const res = await whoami(gatewayA, { 'x-request-id': 'trace-abc.123' });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe('trace-abc.123');
    expect(await jsonOf(res)).toEqual({
      error: 'unauthorized',
      message: expect.any(String),
      doc_url: 'https://gw.test/developers#errors-unauthorized',
      request_id: 'trace-abc.123',
    });
  });

  it('generates a request id when none is sent, and replaces one that is not a plausible id', async () => {
    const generated = await whoami(gatewayA, {});
    expect(generated.headers.get('x-request-id')).toMatch(/^req_/);
    const odd = await whoami(gatewayA, { 'x-request-id': 'x'.repeat(300) });
    expect(odd.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await jsonOf(odd)).request_id).toBe(odd.headers.get('x-request-id'));
  });

  it.each([
    ['a bare Bearer', 'Bearer'],
    ['another scheme', `Basic ${KEY}`],
    ['a secret without our prefix', 'Bearer sk-0123456789abcdefghijklmnop'],
    ['a prefix with too short a secret', 'Bearer sbc_short'],
  ])('a malformed credential (%s) is 401', async (_label, authorization) => {
    const res = await whoami(gatewayA, { authorization });
    expect(res.status).toBe(401);
    expect((await jsonOf(res)).error).toBe('unauthorized');
  });

  it('a well-formed but unknown key is 401', async () => {
    const res = await whoami(gatewayA, { authorization: 'Bearer sbc_unknown_key_0123456789abcdefgh' });
    expect(res.status).toBe(401);
  });

  it('an unknown route is 404 not_found in the envelope', async () => {
    const res = await fetch(`${gatewayA.url}/v1/nope`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).error).toBe('not_found');
  });

  it('an unparsable JSON body is 400 invalid_request naming the body', async () => {
    // Only a route that takes a body reads one (a body sent to any other is never read).
    const res = await fetch(`${gatewayA.url}/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"oops"',
    });
    expect(res.status).toBe(400);
    expect(await jsonOf(res)).toMatchObject({ error: 'invalid_request', param: 'body' });
  });

  it('revoking a key of another account or an unknown id is 404', async () => {
    const res = await fetch(`${gatewayA.url}/v1/keys/key_01NOPE`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).error).toBe('not_found');
  });

  it('records last use without a write per request, and a fresh edge sees it', async () => {
    await whoami(gatewayA, { authorization: `Bearer ${KEY}` });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const fresh = await gateway();
    try {
      const body = await jsonOf(await whoami(fresh, { authorization: `Bearer ${KEY}` }));
      expect(Date.parse(body.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
    } finally {
      await fresh.stop();
    }
  });

  it('health and readiness answer on the edge', async () => {
    expect((await fetch(`${gatewayA.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gatewayA.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${account.httpUrl}/readyz`)).status).toBe(200);
  });

  // Last: it revokes the only key.
  it('a revoked key is refused with 403 at every edge at once, though both had it cached', async () => {
    expect((await whoami(gatewayA, { authorization: `Bearer ${KEY}` })).status).toBe(200);
    expect((await whoami(gatewayB, { authorization: `Bearer ${KEY}` })).status).toBe(200);
    const me = await jsonOf(await whoami(gatewayA, { authorization: `Bearer ${KEY}` }));

    const revoke = await fetch(`${gatewayA.url}/v1/keys/${me.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(revoke.status).toBe(200);
    expect((await jsonOf(revoke)).revoked_at).toEqual(expect.any(String));

    // The broadcast is asynchronous; allow it a moment, far below the 10-minute cache window.
    const deadline = Date.now() + 2_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await whoami(gatewayB, { authorization: `Bearer ${KEY}` })).status;
      if (status === 403) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(403);
    const refused = await whoami(gatewayA, { authorization: `Bearer ${KEY}` });
    expect(refused.status).toBe(403);
    expect(await jsonOf(refused)).toMatchObject({ error: 'insufficient_scope', required_scopes: [] });
  });
});

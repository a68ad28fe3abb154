import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMemoryPubSub, createRedisPubSub, type PubSub } from '@sbc/cache';
import { isApiError } from '@sbc/errors';
import { ROUTING_CHANGED_CHANNEL } from '@sbc/events';
import { newId } from '@sbc/ids';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import { createTestDatabase, testBackends, type TestDatabase } from '@sbc/testing';
import { loadAccountConfig, start, type RunningAccount, type SaveUpstreamInput } from './main';

const ALICE_KEY = 'sk-alice-0123456789-secret';
const ALICE_HEADER = 'alice-header-value-secret';
const BOB_KEY = 'sk-bob-9876543210-secret';
const TEAM_KEY = 'sk-team-shared-secret';

describe('GetRoutingTable over gRPC', () => {
  const redisUrl = testBackends().redisUrl;
  let db: TestDatabase;
  let running: RunningAccount;
  let client: RpcClientOf<typeof AccountService>;
  // With a Redis in the run the service publishes there, as in production; else through a shared in-process channel.
  let sharedPubsub: PubSub | undefined;
  let listener: PubSub;
  const published: string[] = [];
  const alice = newId('usr');
  const bob = newId('usr');
  const carol = newId('usr');
  const team = newId('org');

  const upstream = (userId: string, slug: string, extra: Partial<SaveUpstreamInput> = {}): SaveUpstreamInput => ({
    userId,
    slug,
    label: `${slug} endpoint`,
    baseUrl: 'http://127.0.0.1:8000/v1',
    dialect: 'openai',
    ...extra,
  });

  beforeAll(async () => {
    db = await createTestDatabase('account_routing');
    sharedPubsub = redisUrl ? undefined : createMemoryPubSub();
    listener = sharedPubsub ?? createRedisPubSub(redisUrl!);
    await listener.subscribe(ROUTING_CHANGED_CHANNEL, (message) => {
      published.push(message);
    });
    running = await start(
      loadAccountConfig({
        ACCOUNT_GRPC_PORT: '0',
        ACCOUNT_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        REDIS_URL: redisUrl,
        UPSTREAM_SECRETS_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'silent',
      }),
      { pubsub: sharedPubsub },
    );
    client = createRpcClient(AccountService, { target: running.grpcAddress });
    await running.database.prisma.user.createMany({
      data: [alice, bob, carol].map((id) => ({ id, email: `${id.toLowerCase()}@example.test` })),
    });
    await running.routing.saveUpstream(
      upstream(alice, 'my-vllm', {
        apiKey: ALICE_KEY,
        headers: { 'x-team-token': ALICE_HEADER },
        models: ['qwen3-coder', 'llama-4'],
        probe: { ok: true, models_found: 2, at: '2026-11-01T10:00:00.000Z' },
      }),
    );
    await running.routing.saveUpstream(
      upstream(alice, 'ollama', { baseUrl: 'http://127.0.0.1:11434', dialect: 'auto' }),
    );
    await running.routing.saveUpstream(
      upstream(bob, 'bobs-proxy', { apiKey: BOB_KEY, baseUrl: 'https://api.anthropic.com', dialect: 'anthropic' }),
    );
    await running.routing.saveUpstream(
      upstream(carol, 'team-gpu', { orgId: team, apiKey: TEAM_KEY, models: ['big-model'] }),
    );
    await running.routing.saveAlias({
      userId: alice,
      token: '@Claude',
      vendor: 'anthropic',
      modelId: 'claude-opus-5-5',
    });
    await running.routing.saveAlias({ userId: alice, token: 'cheap', vendor: 'openai', modelId: 'gpt-6-luna' });
    await running.routing.saveAlias({ userId: bob, token: 'bobs', vendor: 'openai', modelId: 'gpt-6-sol' });
  });

  afterAll(async () => {
    client?.close();
    await running?.stop();
    await listener?.close();
    await db?.drop();
  });

  it("returns the caller's endpoints with decrypted keys and headers, and aliases with their @", async () => {
    const table = await client.getRoutingTable({ userId: alice });
    const vllm = table.upstreams.find((u) => u.slug === 'my-vllm');
    expect(vllm).toMatchObject({
      label: 'my-vllm endpoint',
      dialect: 'openai',
      baseUrl: 'http://127.0.0.1:8000/v1',
      apiKey: ALICE_KEY,
      headers: { 'x-team-token': ALICE_HEADER },
      models: ['qwen3-coder', 'llama-4'],
      probedAtMs: BigInt(Date.parse('2026-11-01T10:00:00.000Z')),
    });
    expect(table.aliases.map((a) => ({ token: a.token, vendor: a.vendor, modelId: a.modelId }))).toEqual([
      { token: '@cheap', vendor: 'openai', modelId: 'gpt-6-luna' },
      { token: '@claude', vendor: 'anthropic', modelId: 'claude-opus-5-5' },
    ]);
  });

  it(
    'an endpoint without a key, never probed and saved as auto, comes back keyless, unprobed and in a dialect the ' +
      'edge can speak',
    async () => {
      const table = await client.getRoutingTable({ userId: alice });
      expect(table.upstreams.find((u) => u.slug === 'ollama')).toMatchObject({
        apiKey: '',
        headers: {},
        probedAtMs: 0n,
        dialect: 'openai',
      });
    },
  );

  it("another user's endpoints and aliases never appear, whatever the caller asks", async () => {
    const table = await client.getRoutingTable({ userId: alice });
    const everything = JSON.stringify(table, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    expect(everything).not.toContain(BOB_KEY);
    expect(everything).not.toContain('bobs');
    expect(table.upstreams.map((u) => u.slug).sort()).toEqual(['my-vllm', 'ollama']);
    const bobs = await client.getRoutingTable({ userId: bob });
    expect(bobs.upstreams.map((u) => u.slug)).toEqual(['bobs-proxy']);
    expect(bobs.upstreams[0]).toMatchObject({ apiKey: BOB_KEY, dialect: 'anthropic' });
    expect(bobs.aliases.map((a) => a.token)).toEqual(['@bobs']);
  });

  it('an unknown user gets an empty table, not an error that would tell ids apart', async () => {
    const table = await client.getRoutingTable({ userId: newId('usr') });
    expect(table.upstreams).toEqual([]);
    expect(table.aliases).toEqual([]);
  });

  it('the table holds ciphertext, never the plaintext key or header value', async () => {
    const rows = await running.database.sql.query<{
      api_key_ciphertext: Uint8Array | null;
      headers_ciphertext: Uint8Array | null;
      header_names: unknown;
    }>('SELECT api_key_ciphertext, headers_ciphertext, header_names FROM upstreams WHERE user_id = $1 AND slug = $2', [
      alice,
      'my-vllm',
    ]);
    const row = rows[0]!;
    const apiKey = Buffer.from(row.api_key_ciphertext!);
    const headers = Buffer.from(row.headers_ciphertext!);
    expect(apiKey.subarray(0, 2).toString('ascii')).toBe('v1');
    expect(apiKey.includes(Buffer.from(ALICE_KEY))).toBe(false);
    expect(headers.includes(Buffer.from(ALICE_HEADER))).toBe(false);
    expect(row.header_names).toEqual(['x-team-token']);
    const dump = JSON.stringify(await running.database.sql.query('SELECT * FROM upstreams'));
    for (const secret of [ALICE_KEY, ALICE_HEADER, BOB_KEY, TEAM_KEY]) expect(dump).not.toContain(secret);
  });

  it("team endpoints appear only for a key of that team, with the sharer's key decrypted", async () => {
    const personal = await client.getRoutingTable({ userId: alice });
    expect(personal.upstreams.map((u) => u.slug)).not.toContain('team-gpu');
    const teamKey = await client.getRoutingTable({ userId: alice, orgId: team });
    expect(teamKey.upstreams.find((u) => u.slug === 'team-gpu')).toMatchObject({
      apiKey: TEAM_KEY,
      models: ['big-model'],
    });
    const otherTeam = await client.getRoutingTable({ userId: alice, orgId: newId('org') });
    expect(otherTeam.upstreams.map((u) => u.slug)).not.toContain('team-gpu');
    // The sharer's own personal table does not include the team row either: it belongs to team keys.
    expect((await client.getRoutingTable({ userId: carol })).upstreams).toEqual([]);
  });

  it(
    'a personal endpoint shadows a team endpoint with ' + 'the same slug, so <slug>/<model> means one endpoint',
    async () => {
      const dave = newId('usr');
      await running.database.prisma.user.create({ data: { id: dave, email: `${dave.toLowerCase()}@example.test` } });
      await running.routing.saveUpstream(upstream(dave, 'team-gpu', { apiKey: 'sk-dave-own' }));
      const table = await client.getRoutingTable({ userId: dave, orgId: team });
      expect(table.upstreams.filter((u) => u.slug === 'team-gpu').map((u) => u.apiKey)).toEqual(['sk-dave-own']);
    },
  );

  it('probed_at_ms is when the endpoint last answered: a failed probe leaves it alone', async () => {
    await running.routing.saveUpstream(
      upstream(alice, 'my-vllm', { probe: { ok: false, error: 'connection refused', at: '2026-11-02T10:00:00.000Z' } }),
    );
    const table = await client.getRoutingTable({ userId: alice });
    const vllm = table.upstreams.find((u) => u.slug === 'my-vllm');
    expect(vllm?.probedAtMs).toBe(BigInt(Date.parse('2026-11-01T10:00:00.000Z')));
    // Re-saving without a key keeps the stored one: the key is never shown back, so clients cannot resend it.
    expect(vllm?.apiKey).toBe(ALICE_KEY);
  });

  it(
    "a ciphertext copied into another account's row does not " +
      'open there; that row is left out, the rest still route',
    async () => {
      const erin = newId('usr');
      await running.database.prisma.user.create({ data: { id: erin, email: `${erin.toLowerCase()}@example.test` } });
      await running.routing.saveUpstream(upstream(erin, 'stolen', { apiKey: 'sk-erin-own' }));
      await running.routing.saveUpstream(upstream(erin, 'fine', { apiKey: 'sk-erin-fine' }));
      await running.database.sql.query(
        `UPDATE upstreams SET api_key_ciphertext = (SELECT api_key_ciphertext FROM upstreams WHERE user_id = $1 AND ` +
          `slug = 'my-vllm')
       WHERE user_id = $2 AND slug = 'stolen'`,
        [alice, erin],
      );
      const table = await client.getRoutingTable({ userId: erin });
      expect(table.upstreams.map((u) => ({ slug: u.slug, apiKey: u.apiKey }))).toEqual([
        { slug: 'fine', apiKey: 'sk-erin-fine' },
      ]);
    },
  );

  it("every save tells the edges to drop the user's cached table, and the team's for a shared endpoint", async () => {
    published.length = 0;
    await running.routing.saveAlias({ userId: bob, token: 'fast', vendor: 'house', modelId: 'house-fast' });
    await running.routing.saveUpstream(upstream(carol, 'team-gpu', { orgId: team, label: 'relabelled' }));
    await waitFor(() => published.includes(bob) && published.includes(carol) && published.includes(team));
  });

  it("alias writes bump the user's revision; overwriting keeps one alias", async () => {
    const first = await running.routing.saveAlias({ userId: bob, token: 'x', vendor: 'openai', modelId: 'gpt-6-sol' });
    const second = await running.routing.saveAlias({
      userId: bob,
      token: '@X',
      vendor: 'openai',
      modelId: 'gpt-6-luna',
    });
    expect(second.rev).toBeGreaterThan(first.rev);
    expect(second).toMatchObject({ token: 'x', modelId: 'gpt-6-luna', label: 'GPT-6 Luna', tier: 'fast' });
    const table = await client.getRoutingTable({ userId: bob });
    expect(table.aliases.filter((a) => a.token === '@x').map((a) => a.modelId)).toEqual(['gpt-6-luna']);
  });

  it('a request without a user id is invalid_request', async () => {
    const error = await client.getRoutingTable({ userId: '' }).catch((thrown: unknown) => thrown);
    expect(isApiError(error) && error.code).toBe('invalid_request');
  });
});

describe('the embedded default without a configured secrets key', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-account-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const config = () =>
    loadAccountConfig({ ACCOUNT_GRPC_PORT: '0', ACCOUNT_HTTP_PORT: '0', SBC_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });

  it('keeps a generated key beside the data (mode 0600) and still opens stored secrets after a restart', async () => {
    const userId = newId('usr');
    const first = await start(config(), { pubsub: createMemoryPubSub() });
    try {
      await first.database.prisma.user.create({ data: { id: userId, email: 'embedded@example.test' } });
      await first.routing.saveUpstream({
        userId,
        slug: 'local',
        label: 'local',
        baseUrl: 'http://127.0.0.1:1234',
        dialect: 'openai',
        apiKey: 'sk-embedded',
      });
    } finally {
      await first.stop();
    }
    expect((await stat(path.join(dataDir, 'secrets.key'))).mode & 0o777).toBe(0o600);
    const second = await start(config(), { pubsub: createMemoryPubSub() });
    const client = createRpcClient(AccountService, { target: second.grpcAddress });
    try {
      const table = await client.getRoutingTable({ userId });
      expect(table.upstreams.map((u) => u.apiKey)).toEqual(['sk-embedded']);
    } finally {
      client.close();
      await second.stop();
    }
  }, 90_000); // two embedded starts, each an initdb of PGlite: slow on a busy machine
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the published routing changes');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

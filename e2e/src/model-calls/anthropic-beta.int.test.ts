import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';
import { OWNER_KEY, startStack, type Stack } from '../support/stack';

/**
 * `anthropic-beta` by target (issue 50, CONTRACTS "Agents, tools and policies"), through the edge with the official
 * SDKs, against the simulator behind a recording proxy: the values reach a first-party Anthropic target as the
 * caller sent them, never an OpenAI-dialect one; an endpoint's `anthropic_beta` drops and maps them; a target that
 * refuses some (the simulator playing Vertex and Bedrock) is answered by one re-send without them, and is
 * remembered as refusing them.
 */
let sim: RunningSim;
let proxy: RecordingProxy;
let stack: Stack;

const CLAUDE_CODE_BETAS = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'mid-conversation-system-2026-04-07',
  'effort-2025-11-24',
];
const ACCEPTED_BY_CLOUDS = ['interleaved-thinking-2025-05-14', 'effort-2025-11-24'];

beforeAll(async () => {
  sim = await startSim(
    loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
  );
  proxy = await startRecordingProxy(sim.url);
  stack = await startStack({
    label: 'anthropic_beta',
    edgeEnv: {
      HOUSE_ENGINES: JSON.stringify({
        house: [{ dialect: 'openai', base_url: `${proxy.url}/v1`, model: 'sim-large' }],
        'house-omni': [{ dialect: 'anthropic', base_url: proxy.url, model: 'sim-large' }],
        'house-fast': [{ dialect: 'anthropic', base_url: `${proxy.url}/vertex`, model: 'sim-large', label: 'vertex' }],
      }),
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
  await sim?.stop();
});

const anthropic = () => new Anthropic({ apiKey: OWNER_KEY, baseURL: stack.edge.url, maxRetries: 0 });
const hello = [{ role: 'user' as const, content: 'Hello there' }];
/** The `anthropic-beta` header of each model call the proxy passed on since `from`. */
const betasSent = (path: string, from = 0) =>
  proxy
    .posts(path)
    .slice(from)
    .map((request) => request.headers['anthropic-beta']);
/** A counter's value on the edge's /metrics, by its labels as written there (the edge adds `service`). */
async function counter(name: string, labels: string): Promise<number | undefined> {
  const text = await (await fetch(`${stack.edge.url}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name}{${labels},service="gateway"} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('anthropic-beta on model calls', () => {
  it('reaches a first-party Anthropic target as the caller sent it, passed through and translated alike', async () => {
    const before = proxy.posts('/v1/messages').length;
    const passed = await anthropic().beta.messages.create({
      model: 'house-omni',
      max_tokens: 20,
      messages: hello,
      betas: CLAUDE_CODE_BETAS,
    });
    expect(passed.stop_reason).toBe('end_turn');
    const chat = new OpenAI({
      apiKey: OWNER_KEY,
      baseURL: `${stack.edge.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-beta': CLAUDE_CODE_BETAS.join(',') },
    });
    const translated = await chat.chat.completions.create({ model: 'house-omni', messages: hello });
    expect(translated.choices[0]!.message.content).toBe('Simulated reply to: Hello there');
    expect(betasSent('/v1/messages', before)).toEqual([CLAUDE_CODE_BETAS.join(','), CLAUDE_CODE_BETAS.join(',')]);
  });

  it('never reaches an OpenAI-dialect target', async () => {
    const before = proxy.posts('/v1/chat/completions').length;
    const answer = await anthropic().beta.messages.create({
      model: 'house',
      max_tokens: 20,
      messages: hello,
      betas: CLAUDE_CODE_BETAS,
    });
    expect(answer.stop_reason).toBe('end_turn');
    expect(betasSent('/v1/chat/completions', before)).toEqual([undefined]);
  });

  it(
    'a target that refuses values and names them (Vertex): the stream succeeds after one re-send without them, ' +
      'later calls leave them out up front, and /metrics counts both',
    async () => {
      const stream = await anthropic()
        .beta.messages.create({
          model: 'house-fast',
          max_tokens: 20,
          messages: hello,
          stream: true,
          betas: CLAUDE_CODE_BETAS,
        })
        .withResponse();
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('x-sbc-attempts')).toBe('2');
      let text = '';
      for await (const event of stream.data)
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      expect(text).toBe('Simulated reply to: Hello there');
      expect(betasSent('/vertex/v1/messages')).toEqual([CLAUDE_CODE_BETAS.join(','), ACCEPTED_BY_CLOUDS.join(',')]);
      expect(proxy.posts('/vertex/v1/messages').map((request) => request.status)).toEqual([400, 200]);

      const again = await anthropic()
        .beta.messages.create({ model: 'house-fast', max_tokens: 20, messages: hello, betas: CLAUDE_CODE_BETAS })
        .withResponse();
      expect(again.response.headers.get('x-sbc-attempts')).toBe('1');
      expect(betasSent('/vertex/v1/messages', 2)).toEqual([ACCEPTED_BY_CLOUDS.join(',')]);

      const vertex = 'target="house:house-fast/vertex"';
      expect(await counter('sbc_anthropic_beta_refusals_total', vertex)).toBe(2);
      expect(await counter('sbc_anthropic_beta_left_out_total', vertex)).toBe(2);
      expect(await counter('sbc_upstream_attempts_total', `${vertex},outcome="refused"`)).toBe(1);
    },
  );

  it(
    "an endpoint's anthropic_beta drops and maps values before they are sent; a refusal that names none " +
      '(Bedrock) is re-sent with no beta at all',
    async () => {
      const created = await stack.api('POST', '/v1/upstreams', {
        key: OWNER_KEY,
        body: {
          label: 'Bedrock',
          base_url: `${proxy.url}/bedrock`,
          dialect: 'anthropic',
          api_key: 'sk-bedrock',
          models: ['claude-x'],
          anthropic_beta: {
            drop: ['claude-code-20250219'],
            map: { 'thinking-alias': 'interleaved-thinking-2025-05-14' },
          },
        },
      });
      expect(created.status).toBe(201);
      const mapped = await anthropic().beta.messages.create({
        model: 'bedrock/claude-x',
        max_tokens: 20,
        messages: hello,
        betas: ['claude-code-20250219', 'thinking-alias'],
      });
      expect(mapped.stop_reason).toBe('end_turn');
      expect(betasSent('/bedrock/v1/messages')).toEqual(['interleaved-thinking-2025-05-14']);

      const refused = await anthropic()
        .beta.messages.create({
          model: 'bedrock/claude-x',
          max_tokens: 20,
          messages: hello,
          betas: ['claude-code-20250219', 'thinking-alias', 'mid-conversation-system-2026-04-07'],
        })
        .withResponse();
      expect(refused.response.headers.get('x-sbc-served-by')).toBe('byo:bedrock');
      expect(refused.response.headers.get('x-sbc-attempts')).toBe('2');
      expect(betasSent('/bedrock/v1/messages', 1)).toEqual([
        'interleaved-thinking-2025-05-14,mid-conversation-system-2026-04-07',
        undefined,
      ]);
      expect(await counter('sbc_anthropic_beta_refusals_total', 'target="byo"')).toBe(2);
    },
  );
});

describe('the endpoint setting: anthropic_beta on /v1/upstreams', () => {
  const create = (body: Record<string, unknown>, key = OWNER_KEY) =>
    stack.api('POST', '/v1/upstreams', {
      key,
      body: { base_url: `${proxy.url}/vertex`, dialect: 'anthropic', api_key: 'sk-endpoint-secret-42', ...body },
    });

  it('is saved on create and shown, replaced by an edit without a re-probe, and removed by null', async () => {
    const policy = { drop: ['*'], map: { 'effort-2025-11-24': 'effort-2025-11-24' } };
    const created = await create({ label: 'Vertex allow-list', anthropic_beta: policy });
    expect(created.status).toBe(201);
    expect(created.body.upstream.anthropic_beta).toEqual(policy);
    const plain = await create({ label: 'Vertex plain' });
    expect(plain.body.upstream.anthropic_beta).toBeNull();

    const edited = await stack.api('PATCH', '/v1/upstreams/vertex-allow-list', {
      key: OWNER_KEY,
      body: { anthropic_beta: { drop: ['claude-code-20250219'] } },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.upstream.anthropic_beta).toEqual({ drop: ['claude-code-20250219'], map: {} });
    expect(edited.body.probe).toEqual(created.body.probe);
    const listed = await stack.api('GET', '/v1/upstreams?limit=100', { key: OWNER_KEY });
    const shown = listed.body.data.find((upstream: { slug: string }) => upstream.slug === 'vertex-allow-list');
    expect(shown.anthropic_beta).toEqual({ drop: ['claude-code-20250219'], map: {} });

    const removed = await stack.api('PATCH', '/v1/upstreams/vertex-allow-list', {
      key: OWNER_KEY,
      body: { anthropic_beta: null },
    });
    expect(removed.body.upstream.anthropic_beta).toBeNull();
    const untouched = await stack.api('PATCH', '/v1/upstreams/vertex-plain', { key: OWNER_KEY, body: { weight: 2 } });
    expect(untouched.body.upstream.anthropic_beta).toBeNull();
  });

  it.each([
    ['a value with a comma', { drop: ['a,b'] }, 'anthropic_beta.drop.0'],
    ['a value past 128 characters', { map: { a: 'b'.repeat(129) } }, 'anthropic_beta.map.a'],
    ['more than 64 values', { drop: Array.from({ length: 65 }, (_, i) => `beta-${i}`) }, 'anthropic_beta.drop'],
    ['a value dropped and mapped', { drop: ['a'], map: { a: 'b' } }, 'anthropic_beta.drop.0'],
    ['an unknown field', { allow: ['a'] }, 'anthropic_beta'],
    ['not an object', ['a'], 'anthropic_beta'],
  ])('is refused with 400 naming the part: %s', async (_, policy, param) => {
    const created = await create({ label: 'Bad policy', anthropic_beta: policy });
    expect({ status: created.status, body: created.body }).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', param },
    });
    const edited = await stack.api('PATCH', '/v1/upstreams/vertex-plain', {
      key: OWNER_KEY,
      body: { anthropic_beta: policy },
    });
    expect(edited.status).toBe(400);
  });

  it('needs a credential, and endpoints:write', async () => {
    const policy = { anthropic_beta: { drop: ['x'] } };
    expect((await stack.api('POST', '/v1/upstreams', { body: { label: 'x', ...policy } })).status).toBe(401);
    expect((await stack.api('PATCH', '/v1/upstreams/vertex-plain', { body: policy })).status).toBe(401);
    const reader = await stack.seedKey({ scopes: ['endpoints:read', 'gateway:invoke'] });
    const refused = await create({ label: 'Not mine to write', ...policy }, reader.secret);
    expect(refused).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    const edit = await stack.api('PATCH', '/v1/upstreams/vertex-plain', { key: reader.secret, body: policy });
    expect(edit.status).toBe(403);
  });

  it('is audited, before and after, with the endpoint key still masked', async () => {
    const owner = await stack.seedKey();
    const created = await create({ label: 'Audited policy', anthropic_beta: { drop: ['a-1'] } }, owner.secret);
    const { id } = created.body.upstream;
    await stack.api('PATCH', '/v1/upstreams/audited-policy', {
      key: owner.secret,
      body: { anthropic_beta: { map: { 'b-1': 'c-1' } } },
    });
    const page = await stack.api('GET', '/v1/audit?limit=100', { key: owner.secret });
    const update = page.body.data.find(
      (record: { action: string; resource: { id: string } }) =>
        record.action === 'endpoint.update' && record.resource.id === id,
    );
    expect(update.changes).toMatchObject({
      before: { anthropic_beta: { drop: ['a-1'], map: [] }, has_api_key: true },
      after: { anthropic_beta: { drop: [], map: [['b-1', 'c-1']] } },
    });
    expect(JSON.stringify(page.body)).not.toContain('sk-endpoint-secret-42');
  });
});

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { rejectionOf } from '@sbc/testing';
import { anthropicFor, openAiFor, startStack, type UsageStack } from '../support/stack';
import { teamFixtures } from '../support/teams.harness';
import { requestId } from '../support/usage-events';

/**
 * The exact response cache through the edge with the official SDKs (CONTRACTS "Response cache"): a key that opts
 * in (or a call that sends `x-sbc-cache-ttl`) gets its second identical call replayed in its own dialect, streamed
 * or not, without reaching the upstream and at zero credits; accounts never share an entry.
 */
let stack: UsageStack;

/** A reply as the caller read it: the id the upstream gave it (new for every upstream call) and its text. */
interface Seen {
  id: string;
  text: string;
  cache: string | null;
}

/** Every prompt is new, so no test meets another's entries (the edge's Redis outlives a run). */
const prompt = (tag: string) => `cache ${tag} ${requestId(tag)}`;

async function chat(client: OpenAI, content: string, stream: boolean, headers: Record<string, string> = {}) {
  const body = { model: 'house', max_tokens: 32, messages: [{ role: 'user' as const, content }] };
  if (!stream) {
    const { data, response } = await client.chat.completions.create(body, { headers }).withResponse();
    return { id: data.id, text: data.choices[0]!.message.content ?? '', cache: response.headers.get('x-sbc-cache') };
  }
  const { data, response } = await client.chat.completions
    .create({ ...body, stream: true }, { headers })
    .withResponse();
  const seen: Seen = { id: '', text: '', cache: response.headers.get('x-sbc-cache') };
  for await (const chunk of data) {
    seen.id = chunk.id;
    seen.text += chunk.choices[0]?.delta.content ?? '';
  }
  return seen;
}

async function responses(client: OpenAI, input: string, stream: boolean): Promise<Seen> {
  // Not kept: a kept response gets an id of its own on every call, replayed or not (responses-state suite), so only
  // an unkept one shows the upstream's id, which tells a replay from a new answer.
  const body = { model: 'house', max_output_tokens: 32, input, store: false };
  if (!stream) {
    const { data, response } = await client.responses.create(body).withResponse();
    return { id: data.id, text: data.output_text, cache: response.headers.get('x-sbc-cache') };
  }
  const { data, response } = await client.responses.create({ ...body, stream: true }).withResponse();
  const seen: Seen = { id: '', text: '', cache: response.headers.get('x-sbc-cache') };
  for await (const event of data) {
    if (event.type === 'response.completed') seen.id = event.response.id;
    if (event.type === 'response.output_text.delta') seen.text += event.delta;
  }
  return seen;
}

async function messages(client: Anthropic, content: string, stream: boolean): Promise<Seen> {
  const body = { model: 'house-omni', max_tokens: 32, messages: [{ role: 'user' as const, content }] };
  if (!stream) {
    const { data, response } = await client.messages.create(body).withResponse();
    const text = data.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    return { id: data.id, text, cache: response.headers.get('x-sbc-cache') };
  }
  const { data, response } = await client.messages.create({ ...body, stream: true }).withResponse();
  const seen: Seen = { id: '', text: '', cache: response.headers.get('x-sbc-cache') };
  for await (const event of data) {
    if (event.type === 'message_start') seen.id = event.message.id;
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') seen.text += event.delta.text;
  }
  return seen;
}

/** Mints a key through the API, as a person would, with the response cache set to `ttl` seconds. */
async function mintCachingKey(ttl: number, owner = stack.ownerId): Promise<{ id: string; secret: string }> {
  const minter = owner === stack.ownerId ? undefined : await stack.seedKey({ userId: owner });
  const minted = await stack.api('POST', '/v1/keys', {
    key: minter?.secret ?? (await stack.seedKey()).secret,
    body: { name: 'cached', preset: 'gateway', cache_ttl_s: ttl },
  });
  expect(minted.status).toBe(201);
  expect(minted.body).toMatchObject({ cache_ttl_s: ttl, cache_tools: false });
  return { id: minted.body.id, secret: minted.body.key };
}

interface UsageRow {
  request_id: string;
  status: number;
  credits_charged: number;
  cache_hit: boolean;
}

/** The key's usage rows, once the ledger has `count` of them. */
async function rowsOf(keyId: string, count: number): Promise<UsageRow[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const page = await stack.api('GET', `/v1/usage/requests?limit=100&key_id=${keyId}`, {
      key: (await owner()).secret,
    });
    expect(page.status).toBe(200);
    const rows = page.body.data as UsageRow[];
    if (rows.length >= count) return rows;
    if (Date.now() > deadline) throw new Error(`${rows.length} usage rows of ${keyId}, not ${count}, after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let ownerKey: { id: string; secret: string } | undefined;
const owner = async () => (ownerKey ??= await stack.seedKey());

beforeAll(async () => {
  stack = await startStack({
    label: 'response_cache',
    ledger: {},
    house: (simUrl) => ({
      house: [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large' }],
      'house-omni': [{ dialect: 'anthropic', base_url: simUrl, model: 'sim-large' }],
    }),
    edgeEnv: { RATE_LIMIT_PER_MINUTE: '100000' },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('a key with cache_ttl_s', () => {
  it.each([
    ['chat completions', 'chat'],
    ['responses', 'responses'],
    ['messages', 'messages'],
  ] as const)('%s: the second identical call is a hit, replayed streamed and not', async (_name, dialect) => {
    const key = await mintCachingKey(300);
    const openai = openAiFor(stack.edge.url, key.secret);
    const anthropic = anthropicFor(stack.edge.url, key.secret);
    const call = (content: string, stream: boolean) =>
      dialect === 'chat'
        ? chat(openai, content, stream)
        : dialect === 'responses'
          ? responses(openai, content, stream)
          : messages(anthropic, content, stream);
    for (const stream of [false, true]) {
      const content = prompt(`${dialect}_${stream ? 'stream' : 'json'}`);
      const first = await call(content, stream);
      const second = await call(content, stream);
      expect(first.cache).toBe('miss');
      expect(first.text).not.toBe('');
      // The upstream makes a new id for every call it answers: the same id is the same reply, replayed.
      expect(second).toEqual({ ...first, cache: 'hit' });
    }
    // `stream` is not part of the request's identity: a reply kept from a plain call is replayed as a stream.
    const content = prompt(`${dialect}_cross`);
    const plain = await call(content, false);
    const streamed = await call(content, true);
    expect(streamed).toEqual({ ...plain, cache: 'hit' });
  });

  it('a hit is billed zero credits and recorded in usage with cache_hit', async () => {
    const key = await mintCachingKey(300);
    const openai = openAiFor(stack.edge.url, key.secret);
    const content = prompt('billing');
    await chat(openai, content, false);
    await chat(openai, content, false);
    const rows = await rowsOf(key.id, 2);
    const [hit, miss] = rows;
    expect(miss).toMatchObject({ status: 200, cache_hit: false });
    expect(miss!.credits_charged).toBeGreaterThan(0);
    expect(hit).toMatchObject({ status: 200, cache_hit: true, credits_charged: 0 });
  });

  it('two accounts sending the same body never share an entry', async () => {
    const content = prompt('accounts');
    const mine = await mintCachingKey(300);
    const theirs = await mintCachingKey(300, await stack.seedUser());
    const first = await chat(openAiFor(stack.edge.url, mine.secret), content, false);
    const other = await chat(openAiFor(stack.edge.url, theirs.secret), content, false);
    expect(first.cache).toBe('miss');
    expect(other.cache).toBe('miss');
    expect(other.id).not.toBe(first.id);
    expect((await chat(openAiFor(stack.edge.url, theirs.secret), content, false)).id).toBe(other.id);
  });

  it('x-sbc-cache-ttl: 0 bypasses the cache: no hit, nothing kept', async () => {
    const key = await mintCachingKey(300);
    const openai = openAiFor(stack.edge.url, key.secret);
    const content = prompt('bypass');
    const bypassed = await chat(openai, content, false, { 'x-sbc-cache-ttl': '0' });
    expect(bypassed.cache).toBe('bypass');
    const first = await chat(openai, content, false);
    expect(first.cache).toBe('miss');
    expect(first.id).not.toBe(bypassed.id);
    const again = await chat(openai, content, true, { 'x-sbc-cache-ttl': '0' });
    expect(again.cache).toBe('bypass');
    expect(again.id).not.toBe(first.id);
  });
});

describe('sharing', () => {
  /** A key minted through the API by `minter` (a Full access secret), caching for five minutes. */
  const mint = async (minter: string, body: Record<string, unknown> = {}) => {
    const minted = await stack.api('POST', '/v1/keys', {
      key: minter,
      body: { name: 'cached', preset: 'gateway', cache_ttl_s: 300, ...body },
    });
    expect(minted.status).toBe(201);
    return minted.body.key as string;
  };

  it('a team key shares entries with its team and with no one else, not even its owner personally', async () => {
    const teams = teamFixtures(stack);
    const [owner, member, outsider] = await Promise.all([teams.user(), teams.user(), teams.user()]);
    const team = await teams.createTeam(owner);
    const otherTeam = await teams.createTeam(outsider, 'Other');
    await teams.join(team.id, owner, member);
    const ownersTeamKey = await mint(owner.key, { org_id: team.id });
    const membersTeamKey = await mint(member.key, { org_id: team.id });
    const ownersOwnKey = await mint(owner.key);
    const outsidersTeamKey = await mint(outsider.key, { org_id: otherTeam.id });
    const content = prompt('team');
    const first = await chat(openAiFor(stack.edge.url, ownersTeamKey), content, false);
    expect(first.cache).toBe('miss');
    expect(await chat(openAiFor(stack.edge.url, membersTeamKey), content, false)).toEqual({ ...first, cache: 'hit' });
    for (const other of [ownersOwnKey, outsidersTeamKey]) {
      const answer = await chat(openAiFor(stack.edge.url, other), content, false);
      expect(answer.cache).toBe('miss');
      expect(answer.id).not.toBe(first.id);
    }
  });
});

describe('replies that ask for tool calls', () => {
  const callTool = async (client: OpenAI, content: string) => {
    const { data, response } = await client.chat.completions
      .create({
        model: 'house',
        max_tokens: 64,
        messages: [{ role: 'user', content }],
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
        tool_choice: 'required',
      })
      .withResponse();
    expect(data.choices[0]!.message.tool_calls).toHaveLength(1);
    return { id: data.id, cache: response.headers.get('x-sbc-cache') };
  };

  it('are kept only when the key has cache_tools', async () => {
    const key = await mintCachingKey(300);
    const openai = openAiFor(stack.edge.url, key.secret);
    const content = prompt('tools');
    expect((await callTool(openai, content)).cache).toBe('miss');
    expect((await callTool(openai, content)).cache).toBe('miss');
    const patched = await stack.api('PATCH', `/v1/keys/${key.id}`, {
      key: (await owner()).secret,
      body: { cache_tools: true },
    });
    expect(patched.status).toBe(200);
    // Once the edge sees the change (its cached copy of the key follows it), a miss is kept and the next is a hit.
    let previous = await callTool(openai, content);
    for (let tries = 0; tries < 60; tries++) {
      const next = await callTool(openai, content);
      if (next.cache === 'hit') {
        expect(next.id).toBe(previous.id);
        return;
      }
      previous = next;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error('a reply with tool calls was never replayed after cache_tools was set');
  });
});

describe('the x-sbc-cache-ttl header', () => {
  it('opts a call in on a key that does not cache; without it nothing is cached or marked', async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const openai = openAiFor(stack.edge.url, key.secret);
    const content = prompt('header');
    const plain = await chat(openai, content, false);
    expect(plain.cache).toBeNull();
    const first = await chat(openai, content, false, { 'x-sbc-cache-ttl': '60' });
    expect(first.cache).toBe('miss');
    expect(await chat(openai, content, true, { 'x-sbc-cache-ttl': '60' })).toEqual({ ...first, cache: 'hit' });
  });

  it.each(['-1', 'soon', '2592001', '1.5'])('%s is a 400 naming the header', async (value) => {
    const error = await rejectionOf(chat(stack.openai, prompt('bad_header'), false, { 'x-sbc-cache-ttl': value }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('x-sbc-cache-ttl');
  });
});

describe('cache settings on keys', () => {
  it('are set at mint, changed and cleared by PATCH, and refused out of range', async () => {
    const key = await mintCachingKey(120);
    const ownerSecret = (await owner()).secret;
    const patched = await stack.api('PATCH', `/v1/keys/${key.id}`, {
      key: ownerSecret,
      body: { cache_ttl_s: 600, cache_tools: true },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ cache_ttl_s: 600, cache_tools: true });
    const cleared = await stack.api('PATCH', `/v1/keys/${key.id}`, { key: ownerSecret, body: { cache_ttl_s: null } });
    expect(cleared.body).toMatchObject({ cache_ttl_s: 0, cache_tools: true });
    for (const body of [{ cache_ttl_s: -1 }, { cache_ttl_s: 2_592_001 }, { cache_ttl_s: 'long' }]) {
      const refused = await stack.api('PATCH', `/v1/keys/${key.id}`, { key: ownerSecret, body });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_request', param: 'cache_ttl_s' });
    }
  });
});

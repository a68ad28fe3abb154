import OpenAI from 'openai';
import type {
  Response as OpenAiResponse,
  ResponseCreateParamsNonStreaming,
} from 'openai/resources/responses/responses';
import { rejectionOf } from '@sbc/testing';
import { openAiFor, startStack, type HouseSpec, type RunsStack } from '../support/stack';
import { teamFixtures, type TeamUser } from '../support/teams.harness';

/**
 * Stored Responses through the edge with the official `openai` SDK (CONTRACTS "Agents, tools and policies"):
 * `store` keeps a response for its account (a team key: its team) in the runs service; `responses.retrieve`,
 * `responses.inputItems.list` and `responses.delete` read it back in OpenAI's shapes; `previous_response_id`
 * continues it on an OpenAI-dialect engine (`house`) and on an Anthropic-dialect one (`house-omni`), streamed or
 * not. The simulator behind both refuses a tool result whose tool call is not in the turn before it, as the real
 * APIs do, so a continuation that did not send the stored turn would fail.
 */

/** Each account keeps this many responses here (RESPONSES_MAX_PER_ACCOUNT): small, so the bound is seen. */
const MAX_PER_ACCOUNT = 5;

const house = (simUrl: string): HouseSpec => ({
  house: [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large' }],
  'house-omni': [{ dialect: 'anthropic', base_url: simUrl, model: 'sim-large' }],
});

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

let stack: RunsStack;
/** A second edge over the same services. */
let otherEdge: string;
let teams: ReturnType<typeof teamFixtures>;

beforeAll(async () => {
  stack = await startStack({
    label: 'responses_state',
    house,
    runs: { env: { RUNS_WORKERS: '0', RESPONSES_MAX_PER_ACCOUNT: String(MAX_PER_ACCOUNT) } },
    edgeEnv: { RATE_LIMIT_PER_MINUTE: '100000' },
  });
  otherEdge = (await stack.startEdge(house(stack.sim.url))).url;
  teams = teamFixtures(stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** A fresh account with a Full access key, and an SDK client holding it. */
async function account(): Promise<{ user: TeamUser; openai: OpenAI }> {
  const user = await teams.user();
  return { user, openai: openAiFor(stack.edge.url, user.key) };
}

type Body = Omit<ResponseCreateParamsNonStreaming, 'stream'>;

/** A create, streamed or not; the response as the caller ends up with it (a stream's `response.completed`). */
async function create(openai: OpenAI, body: Body, stream: boolean): Promise<OpenAiResponse> {
  if (!stream) return openai.responses.create(body);
  const events = await openai.responses.create({ ...body, stream: true });
  let final: OpenAiResponse | undefined;
  for await (const event of events) if (event.type === 'response.completed') final = event.response;
  if (!final) throw new Error('the stream ended without response.completed');
  return final;
}

/** The object as the wire carried it: the SDK adds `output_text` to what it returns. */
function wire(response: OpenAiResponse): Record<string, unknown> {
  const { output_text: _added, ...rest } = response as OpenAiResponse & { output_text?: string };
  return rest;
}

async function allInputItems(openai: OpenAI, id: string, order: 'asc' | 'desc' = 'asc') {
  const items: Array<{ id: string; type: string } & Record<string, unknown>> = [];
  for await (const item of openai.responses.inputItems.list(id, { order, limit: 2 }))
    items.push(item as unknown as (typeof items)[number]);
  return items;
}

describe('store, then read back', () => {
  it.each([
    ['house', false],
    ['house-omni', true],
  ])(
    'a stored response (%s, streamed %s) is retrieved as its create returned it, on any edge',
    async (model, stream) => {
      const { openai, user } = await account();
      const created = await create(
        openai,
        { model, input: 'Tell me about stored responses', instructions: 'Be brief.', metadata: { topic: 'state' } },
        stream,
      );
      expect(created).toMatchObject({
        id: expect.stringMatching(/^resp_[A-Za-z0-9]{24}$/),
        object: 'response',
        status: 'completed',
        model,
        store: true,
        instructions: 'Be brief.',
        previous_response_id: null,
        metadata: { topic: 'state' },
      });
      // The caller has the last bytes: every edge finds the response now.
      for (const url of [otherEdge, stack.edge.url]) {
        const retrieved = await openAiFor(url, user.key).responses.retrieve(created.id);
        expect(wire(retrieved)).toEqual(wire(created));
      }
    },
  );

  it('lists the input as items with ids, newest first, paged by `after`, oldest first with order=asc', async () => {
    const { openai, user } = await account();
    const input = [
      { role: 'developer' as const, content: 'Answer in one line.' },
      { role: 'user' as const, content: 'First question' },
      { type: 'message' as const, role: 'assistant' as const, content: 'First answer', id: 'msg_mine' },
      { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'Second question' }] },
      { role: 'user' as const, content: 'Third question' },
    ];
    const created = await openai.responses.create({ model: 'house', input });
    const first = await openai.responses.inputItems.list(created.id, { limit: 2 });
    expect(first.data.map((item) => (item as { content: Array<{ text: string }> }).content[0]!.text)).toEqual([
      'Third question',
      'Second question',
    ]);
    expect(first.has_more).toBe(true);
    const second = await first.getNextPage();
    expect(second.data.map((item) => item.id)).toEqual(['msg_mine', expect.stringMatching(/^msg_/)]);
    const ascending = await allInputItems(openai, created.id, 'asc');
    expect(ascending).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'Answer in one line.' }],
        status: 'completed',
      },
      expect.objectContaining({ role: 'user', content: [{ type: 'input_text', text: 'First question' }] }),
      expect.objectContaining({
        id: 'msg_mine',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'First answer', annotations: [] }],
      }),
      expect.objectContaining({ content: [{ type: 'input_text', text: 'Second question' }] }),
      expect.objectContaining({ content: [{ type: 'input_text', text: 'Third question' }] }),
    ]);
    expect((await allInputItems(openai, created.id, 'desc')).map((item) => item.id)).toEqual(
      ascending.map((item) => item.id).reverse(),
    );
    // The raw page: OpenAI's list object.
    const raw = await stack.api('GET', `/v1/responses/${created.id}/input_items?limit=1&order=asc`, {
      key: user.key,
    });
    expect(raw.status).toBe(200);
    expect(raw.body).toMatchObject({
      object: 'list',
      data: [ascending[0]],
      first_id: ascending[0]!.id,
      last_id: ascending[0]!.id,
      has_more: true,
    });
  });

  it('deletes a response (OpenAI’s deletion object); then it is 404 to reads and previous_response_id', async () => {
    const { openai, user } = await account();
    const created = await openai.responses.create({ model: 'house', input: 'Forget me' });
    const deleted = await stack.api('DELETE', `/v1/responses/${created.id}`, { key: user.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: created.id, object: 'response', deleted: true });
    expect(await rejectionOf(openai.responses.retrieve(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(openai.responses.inputItems.list(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(openai.responses.delete(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await rejectionOf(
      openai.responses.create({ model: 'house', input: 'and then?', previous_response_id: created.id }),
    );
    expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
    expect(continued.error).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });

    // The SDK's own delete, on another response.
    const other = await openai.responses.create({ model: 'house', input: 'Forget me too' });
    await openai.responses.delete(other.id);
    expect(await rejectionOf(openai.responses.retrieve(other.id))).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('previous_response_id continues a stored response in the target’s own dialect', () => {
  it.each([
    ['house', false],
    ['house', true],
    ['house-omni', false],
    ['house-omni', true],
  ])('%s, streamed %s: a tool call in the stored turn, its result in the next call', async (model, stream) => {
    const { openai } = await account();
    const first = await create(
      openai,
      {
        model,
        instructions: 'Use the tools.',
        input: 'sim:call:get_weather {"city":"Paris"}',
        tools: [WEATHER],
      },
      stream,
    );
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    const callId = (call as { call_id: string }).call_id;

    const second = await create(
      openai,
      {
        model,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: callId, output: 'sunny and 21 C' }],
        tools: [WEATHER],
      },
      stream,
    );
    // The upstream saw the stored call before its result (it refuses one without the other) and answered from it.
    const text = second.output
      .flatMap((item) => (item.type === 'message' ? item.content : []))
      .map((part) => (part.type === 'output_text' ? part.text : ''))
      .join('');
    expect(text).toBe('Simulated reply using the tool result: sunny and 21 C');
    expect(second).toMatchObject({ previous_response_id: first.id, instructions: null, store: true });
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);

    // Its input items are its whole context: the first call's input and output, then its own input.
    const items = await allInputItems(openai, second.id);
    expect(items.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(items[1]).toMatchObject({ id: (call as { id: string }).id, call_id: callId, name: 'get_weather' });
    expect(items[2]).toMatchObject({ call_id: callId, output: 'sunny and 21 C' });

    // And a third turn goes on from the second.
    const third = await create(
      openai,
      { model, previous_response_id: second.id, input: 'Thanks, and tomorrow?', tools: [WEATHER] },
      stream,
    );
    expect(third.status).toBe('completed');
    expect((await allInputItems(openai, third.id)).map((item) => item.type)).toEqual([
      'message',
      'function_call',
      'function_call_output',
      'message',
      'message',
    ]);
  });

  it('refuses an item of the continued response sent again in input (as OpenAI does)', async () => {
    const { openai } = await account();
    const first = await openai.responses.create({ model: 'house', input: 'Hello' });
    const refused = await rejectionOf(
      openai.responses.create({
        model: 'house',
        previous_response_id: first.id,
        input: [first.output[0] as never, { role: 'user', content: 'again' }],
      }),
    );
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.error).toMatchObject({ param: 'input.0.id', code: 'invalid_request' });
  });
});

describe('with the response cache', () => {
  it('a cache hit of a kept response is kept too, under an id of its own', async () => {
    const { openai } = await account();
    const cached = { headers: { 'x-sbc-cache-ttl': '300' } };
    const body = { model: 'house', input: `Cache me ${Date.now()}` };
    const first = await openai.responses.create(body, cached).withResponse();
    const second = await openai.responses.create(body, cached).withResponse();
    expect(first.response.headers.get('x-sbc-cache')).toBe('miss');
    expect(second.response.headers.get('x-sbc-cache')).toBe('hit');
    expect(second.data.output_text).toBe(first.data.output_text);
    expect(second.data.id).not.toBe(first.data.id);
    for (const kept of [first.data, second.data])
      expect(wire(await openai.responses.retrieve(kept.id))).toEqual(wire(kept));
  });
});

describe('whose responses', () => {
  it('another account’s response is 404 to retrieve, input_items, delete and previous_response_id', async () => {
    const alice = await account();
    const bob = await account();
    const created = await alice.openai.responses.create({ model: 'house', input: 'Alice’s' });
    const attempts = [
      bob.openai.responses.retrieve(created.id),
      bob.openai.responses.inputItems.list(created.id),
      bob.openai.responses.delete(created.id),
      bob.openai.responses.create({ model: 'house', input: 'mine now', previous_response_id: created.id }),
    ];
    for (const attempt of attempts) {
      const refused = await rejectionOf(attempt);
      expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    }
    const unknown = await rejectionOf(bob.openai.responses.retrieve('resp_nobodyhasthisid00000000'));
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.error).toMatchObject({ type: 'not_found_error', code: 'not_found', param: 'response_id' });
    // Untouched for its owner.
    expect((await alice.openai.responses.retrieve(created.id)).id).toBe(created.id);
  });

  it('a team key sees its team’s responses only: not its owner’s own, not another team’s', async () => {
    const [owner, member, outsider] = await Promise.all([teams.user(), teams.user(), teams.user()]);
    const team = await teams.createTeam(owner);
    const otherTeam = await teams.createTeam(outsider, 'Other');
    await teams.join(team.id, owner, member);
    const mint = async (minter: TeamUser, orgId?: string) => {
      const minted = await stack.api('POST', '/v1/keys', {
        key: minter.key,
        body: { name: 'responses', preset: 'gateway', ...(orgId ? { org_id: orgId } : {}) },
      });
      expect(minted.status).toBe(201);
      return openAiFor(stack.edge.url, minted.body.key as string);
    };
    const ownersTeamKey = await mint(owner, team.id);
    const membersTeamKey = await mint(member, team.id);
    const ownersOwnKey = await mint(owner);
    const outsidersTeamKey = await mint(outsider, otherTeam.id);

    const teams_ = await ownersTeamKey.responses.create({ model: 'house', input: 'For the team' });
    expect((await membersTeamKey.responses.retrieve(teams_.id)).id).toBe(teams_.id);
    const continued = await membersTeamKey.responses.create({
      model: 'house',
      input: 'Go on',
      previous_response_id: teams_.id,
    });
    expect(continued.previous_response_id).toBe(teams_.id);
    for (const other of [ownersOwnKey, outsidersTeamKey])
      expect(await rejectionOf(other.responses.retrieve(teams_.id))).toBeInstanceOf(OpenAI.NotFoundError);

    const personal = await ownersOwnKey.responses.create({ model: 'house', input: 'Mine alone' });
    expect(await rejectionOf(ownersTeamKey.responses.retrieve(personal.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await openAiFor(stack.edge.url, owner.key).responses.retrieve(personal.id)).id).toBe(personal.id);
  });
});

describe('store: false', () => {
  it.each([false, true])('keeps nothing (streamed %s): no read back, no continuation', async (stream) => {
    const { openai } = await account();
    const created = await create(openai, { model: 'house-omni', input: 'Do not keep this', store: false }, stream);
    expect(wire(created).store).toBe(false);
    expect(await rejectionOf(openai.responses.retrieve(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await rejectionOf(
      openai.responses.create({ model: 'house', input: 'and then?', previous_response_id: created.id }),
    );
    expect(continued).toBeInstanceOf(OpenAI.NotFoundError);
    expect(continued.error).toMatchObject({ code: 'previous_response_not_found' });
  });

  it('continues a stored response without keeping the continuation', async () => {
    const { openai } = await account();
    const first = await openai.responses.create({ model: 'house', input: 'Keep this one' });
    const second = await openai.responses.create({
      model: 'house',
      input: 'But not this one',
      previous_response_id: first.id,
      store: false,
    });
    expect(second).toMatchObject({ store: false, previous_response_id: first.id, status: 'completed' });
    expect(await rejectionOf(openai.responses.retrieve(second.id))).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('bounds', () => {
  it(`an account keeps its ${MAX_PER_ACCOUNT} newest responses: the oldest goes first`, async () => {
    const { openai } = await account();
    const ids: string[] = [];
    for (let n = 0; n <= MAX_PER_ACCOUNT; n++)
      ids.push((await openai.responses.create({ model: 'house', input: `number ${n}` })).id);
    expect(await rejectionOf(openai.responses.retrieve(ids[0]!))).toBeInstanceOf(OpenAI.NotFoundError);
    for (const kept of ids.slice(1)) expect((await openai.responses.retrieve(kept)).id).toBe(kept);
  });
});

describe('refusals', () => {
  it('bad ids and paging parameters are 400 in OpenAI’s error shape, naming the parameter', async () => {
    const { user } = await account();
    const created = await openAiFor(stack.edge.url, user.key).responses.create({ model: 'house', input: 'x' });
    const cases: Array<[string, string, string]> = [
      ['GET', '/v1/responses/not-a-response', 'response_id'],
      ['DELETE', '/v1/responses/msg_123', 'response_id'],
      ['GET', '/v1/responses/resp_bad!id/input_items', 'response_id'],
      ['GET', `/v1/responses/${created.id}/input_items?limit=0`, 'limit'],
      ['GET', `/v1/responses/${created.id}/input_items?limit=101`, 'limit'],
      ['GET', `/v1/responses/${created.id}/input_items?limit=many`, 'limit'],
      ['GET', `/v1/responses/${created.id}/input_items?order=sideways`, 'order'],
      ['GET', `/v1/responses/${created.id}/input_items?after=`, 'after'],
      ['GET', `/v1/responses/${created.id}?stream=true`, 'stream'],
      ['GET', '/v1/responses/resp_%ff', 'path'],
      ['GET', `/v1/responses/${created.id}/input_items?after=%ff`, 'query.after'],
    ];
    for (const [method, path, param] of cases) {
      const answer = await stack.api(method, path, { key: user.key });
      expect([method, path, answer.status]).toEqual([method, path, 400]);
      expect(answer.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_request', param } });
      expect(answer.headers.get('x-request-id')).toBeTruthy();
    }
    const badPrevious = await stack.api('POST', '/v1/responses', {
      key: user.key,
      body: { model: 'house', input: 'x', previous_response_id: 'msg_1', store: 'yes' },
    });
    expect(badPrevious.status).toBe(400);
    expect(badPrevious.body.error).toMatchObject({ param: 'previous_response_id' });
    expect(badPrevious.body.error.issues.map((issue: { path: string }) => issue.path)).toEqual([
      'previous_response_id',
      'store',
    ]);
  });

  it('needs a credential (401 in OpenAI’s shape) holding gateway:invoke (403 insufficient_scope)', async () => {
    const { openai, user } = await account();
    const created = await openai.responses.create({ model: 'house', input: 'x' });
    const narrow = await stack.seedKey({ userId: user.id, scopes: ['usage:read'] });
    const routes: Array<[string, string]> = [
      ['GET', `/v1/responses/${created.id}`],
      ['GET', `/v1/responses/${created.id}/input_items`],
      ['DELETE', `/v1/responses/${created.id}`],
    ];
    for (const [method, path] of routes) {
      const anonymous = await stack.api(method, path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toMatchObject({ error: { type: 'authentication_error' } });
      const forbidden = await stack.api(method, path, { key: narrow.secret });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['gateway:invoke'] });
    }
    // The SDK sees the same refusals.
    const sdk = openAiFor(stack.edge.url, narrow.secret);
    expect(await rejectionOf(sdk.responses.retrieve(created.id))).toBeInstanceOf(OpenAI.PermissionDeniedError);
    // Nothing was deleted by the refused calls.
    expect((await openai.responses.retrieve(created.id)).id).toBe(created.id);
  });
});

describe('when the runs service cannot take the write', () => {
  it('the caller still gets its reply, streamed or not; the failure is counted; a read back is 503', async () => {
    const { openai } = await account();
    const metric = async () => {
      const text = await (await fetch(`${stack.edge.url}/metrics`)).text();
      const found = /^sbc_stored_responses_total\{outcome="failed"[^}]*\} (\d+)$/m.exec(text);
      return found ? Number(found[1]) : 0;
    };
    const before = await metric();
    await stack.runs.stop();
    const whole = await openai.responses.create({ model: 'house', input: 'Nobody keeps this' });
    expect(whole.output_text).toBe('Simulated reply to: Nobody keeps this');
    const streamed = await create(openai, { model: 'house-omni', input: 'Nor this' }, true);
    expect(streamed.status).toBe('completed');
    expect(await metric()).toBe(before + 2);
    const read = await rejectionOf(openai.responses.retrieve(whole.id));
    expect(read).toBeInstanceOf(OpenAI.InternalServerError);
    expect(read.status).toBe(503);

    // Calls that keep nothing never reach the runs service: with it gone they are answered as ever, and no write
    // was tried (none failed).
    await create(openai, { model: 'house', input: 'Not kept', store: false }, false);
    await create(openai, { model: 'house-omni', input: 'Not kept either', store: false }, true);
    await openai.chat.completions.create({
      model: 'house',
      messages: [{ role: 'user', content: 'Chat keeps nothing' }],
    });
    await openai.chat.completions.create({ model: 'house', messages: [{ role: 'user', content: 'x' }], store: true });
    expect(await metric()).toBe(before + 2);
  });
});

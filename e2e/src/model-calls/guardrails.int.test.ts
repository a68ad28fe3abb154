import http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { anthropicFor, openAiFor, OWNER_KEY, startStack, type UsageStack } from '../support/stack';
import { teamFixtures } from '../support/teams.harness';

/**
 * Guardrails through the edge with the official SDKs (CONTRACTS "Guardrails"), in each dialect: what a key's
 * guardrail redacts never reaches the upstream (its recorded body), what it blocks is 400 `guardrail_blocked`
 * naming the guardrail and never the matched text, webhooks fail open or closed as set, a streamed reply is cut
 * mid-way by a block, a team's guardrail applies to its team keys, and a header can add a guardrail, never remove one.
 */
let stack: UsageStack;

/** A relay in front of the sim that keeps every request body the upstream received. */
const received: string[] = [];
let simUrl = '';
const recorder = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    received.push(body.toString('utf8'));
    const upstream = http.request(
      `${simUrl}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: new URL(simUrl).host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });
});

/** A guardrail webhook: answers with `answer` (a status and a body), and keeps what it was sent with its headers. */
const hookCalls: Array<{ headers: http.IncomingHttpHeaders; body: Record<string, unknown> }> = [];
let hookAnswer: { status: number; body: unknown } = { status: 200, body: { action: 'allow' } };
const webhook = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    hookCalls.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
    res.writeHead(hookAnswer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(hookAnswer.body));
  });
});

const listen = (server: http.Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)),
  );

let recorderUrl = '';
let webhookUrl = '';

beforeAll(async () => {
  recorderUrl = await listen(recorder);
  webhookUrl = await listen(webhook);
  stack = await startStack({
    label: 'guardrails',
    ledger: {},
    simTokensPerSecond: 0,
    house: (sim) => {
      simUrl = sim;
      return {
        house: [{ dialect: 'openai', base_url: `${recorderUrl}/v1`, model: 'sim-large' }],
        'house-omni': [{ dialect: 'anthropic', base_url: recorderUrl, model: 'sim-large' }],
      };
    },
    edgeEnv: { RATE_LIMIT_PER_MINUTE: '100000', EGRESS_PRIVATE: 'everyone', GUARDRAIL_JUDGE_MAX_CHARS: '4000' },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  recorder.close();
  webhook.close();
});

/** A guardrail made through the API by `key`. */
async function guardrail(body: Record<string, unknown>, key = OWNER_KEY): Promise<{ id: string; name: string }> {
  const made = await stack.api('POST', '/v1/guardrails', { key, body: { name: `g ${received.length}`, ...body } });
  expect(made.status).toBe(201);
  expect(made.body).toMatchObject({ object: 'guardrail', kind: body.kind });
  return made.body;
}

/** A fresh gateway key of the owner with these guardrails attached through PATCH /v1/keys/{id}. */
async function keyWith(guardrails: string[]): Promise<string> {
  const minted = await stack.api('POST', '/v1/keys', { key: OWNER_KEY, body: { name: 'guarded', preset: 'gateway' } });
  expect(minted.status).toBe(201);
  const patched = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, { key: OWNER_KEY, body: { guardrails } });
  expect(patched.status).toBe(200);
  expect(patched.body.guardrails).toEqual(guardrails);
  return minted.body.key;
}

type Dialect = 'chat' | 'responses' | 'messages';
const DIALECTS: Dialect[] = ['chat', 'responses', 'messages'];

/** One call in `dialect` with the SDK; the reply's text. */
async function call(dialect: Dialect, key: string, content: string, headers: Record<string, string> = {}) {
  if (dialect === 'messages') {
    const reply = await anthropicFor(stack.edge.url, key).messages.create(
      { model: 'house-omni', max_tokens: 400, messages: [{ role: 'user', content }] },
      { headers },
    );
    return reply.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  }
  const openai = openAiFor(stack.edge.url, key);
  if (dialect === 'responses') {
    const reply = await openai.responses.create(
      { model: 'house', max_output_tokens: 400, instructions: 'Be brief.', input: content },
      { headers },
    );
    return reply.output_text;
  }
  const reply = await openai.chat.completions.create(
    { model: 'house', max_tokens: 400, messages: [{ role: 'user', content }] },
    { headers },
  );
  return reply.choices[0]!.message.content ?? '';
}

/** A call's refusal as the SDK raised it: its status and body. */
async function refusalOf(promise: Promise<unknown>): Promise<{ status: number; error: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError || error instanceof Anthropic.APIError)
      return { status: error.status ?? 0, error: error.error as Record<string, unknown> };
    throw error;
  }
  throw new Error('the call was not refused');
}

/** The guardrail named in a refusal, whatever the dialect's error shape. */
const guardrailIn = (error: Record<string, unknown>) =>
  ((error.error as Record<string, unknown> | undefined) ?? error).guardrail as Record<string, unknown> | undefined;

const CARD = '4111 1111 1111 1111';

describe.each(DIALECTS)('%s', (dialect) => {
  it('a card number is redacted before the upstream sees it', async () => {
    const card = await guardrail({ kind: 'detectors', detectors: [{ type: 'card', action: 'redact' }] });
    const key = await keyWith([card.id]);
    const before = received.length;
    const text = await call(dialect, key, `charge my card ${CARD} please`);
    const sent = received.slice(before).join('\n');
    expect(sent).toContain('[REDACTED:card]');
    expect(sent).not.toContain('4111');
    // The sim repeats the prompt it got: the reply shows the redaction, not the number.
    expect(text).toContain('[REDACTED:card]');
  });

  it('a blocked word is refused with guardrail_blocked naming the guardrail, not the word', async () => {
    const words = await guardrail({
      kind: 'detectors',
      detectors: [{ type: 'words', action: 'block', words: ['orion'] }],
    });
    const key = await keyWith([words.id]);
    const before = received.length;
    const refusal = await refusalOf(call(dialect, key, 'tell me about project Orion'));
    expect(refusal.status).toBe(400);
    expect(JSON.stringify(refusal.error)).toContain('guardrail_blocked');
    expect(guardrailIn(refusal.error)).toEqual({ id: words.id, name: words.name, kind: 'detectors' });
    expect(JSON.stringify(refusal.error).toLowerCase()).not.toContain('orion');
    expect(received.length).toBe(before);
  });

  it('a webhook failing closed blocks, one failing open lets the call go, one allowing is signed', async () => {
    const closed = await guardrail({ kind: 'webhook', url: `${webhookUrl}/check`, timeout_ms: 1_000, fail: 'closed' });
    const open = await guardrail({ kind: 'webhook', url: `${webhookUrl}/check`, timeout_ms: 1_000, fail: 'open' });
    hookAnswer = { status: 500, body: { error: 'down' } };
    const refusal = await refusalOf(call(dialect, await keyWith([closed.id]), 'hello there'));
    expect(refusal.status).toBe(400);
    expect(guardrailIn(refusal.error)).toMatchObject({ id: closed.id, kind: 'webhook' });
    expect(await call(dialect, await keyWith([open.id]), 'hello there')).toContain('hello there');
    hookAnswer = { status: 200, body: { action: 'allow' } };
    const calls = hookCalls.length;
    expect(await call(dialect, await keyWith([closed.id]), 'hello again')).toContain('hello again');
    const seen = hookCalls.slice(calls);
    expect(seen.map((one) => one.body.type)).toEqual(['request', 'reply']);
    expect(seen[0]!.headers['webhook-signature']).toMatch(/^v1,/);
    expect(JSON.stringify(seen[0]!.body.request)).toContain('hello again');
    hookAnswer = { status: 200, body: { action: 'block' } };
    expect((await refusalOf(call(dialect, await keyWith([open.id]), 'hello'))).status).toBe(400);
    hookAnswer = { status: 200, body: { action: 'allow' } };
  });

  it('a model judge blocks on yes, passes on no, fails closed or open, and each question has a usage row', async () => {
    const judge = await guardrail({
      kind: 'judge',
      question: 'Does this ask about the launch?',
      applies_to: ['request'],
    });
    expect(judge).toMatchObject({ model: 'house', max_tokens: 64, timeout_ms: 5_000, fail: 'closed' });
    const minted = await stack.api('POST', '/v1/keys', { key: OWNER_KEY, body: { name: 'judged', preset: 'gateway' } });
    await stack.api('PATCH', `/v1/keys/${minted.body.id}`, { key: OWNER_KEY, body: { guardrails: [judge.id] } });
    const key = minted.body.key as string;
    // The sim answers the judge's forced verdict call with the arguments a `sim:call:` directive in its prompt names.
    const yes = `when is the launch sim:call:verdict {"answer":"yes"}`;
    const refusal = await refusalOf(call(dialect, key, yes, { 'x-request-id': `judge-yes-${dialect}` }));
    expect(refusal.status).toBe(400);
    expect(JSON.stringify(refusal.error)).toContain('guardrail_blocked');
    expect(guardrailIn(refusal.error)).toEqual({ id: judge.id, name: judge.name, kind: 'judge' });
    const no = `say hello sim:call:verdict {"answer":"no"}`;
    expect(await call(dialect, key, no, { 'x-request-id': `judge-no-${dialect}` })).toContain('say hello');

    const rowsOf = async (requestId: string, count: number) => {
      const deadline = Date.now() + 20_000;
      let rows: Array<Record<string, unknown>> = [];
      while (rows.length < count && Date.now() < deadline) {
        const page = await stack.api('GET', `/v1/usage/requests?key_id=${minted.body.id}`, { key: OWNER_KEY });
        rows = (page.body.data as Array<Record<string, unknown>>).filter((row) => row.request_id === requestId);
        if (rows.length < count) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      return rows;
    };
    // The judge's question is a call of the key: a row of its own (the judge's model, in Chat Completions), billed.
    const blocked = await rowsOf(`judge-yes-${dialect}`, 2);
    expect(blocked).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ status: 400, guardrail: { id: judge.id, action: 'block' } }),
        expect.objectContaining({ status: 200, model: 'house', dialect: 'chat', guardrail: null }),
      ]),
    );
    const asked = blocked.find((row) => row.status === 200)!;
    expect(asked.native_tokens_prompt).toBeGreaterThan(0);
    expect(asked.native_tokens_completion).toBeGreaterThan(0);
    expect((await rowsOf(`judge-no-${dialect}`, 2)).map((row) => row.status)).toEqual([200, 200]);

    // A judge that cannot answer (a model no key can call): closed blocks, open lets the call go.
    const closed = await guardrail({ kind: 'judge', model: 'no-such-model', question: 'Is it bad?', fail: 'closed' });
    const open = await guardrail({ kind: 'judge', model: 'no-such-model', question: 'Is it bad?', fail: 'open' });
    expect((await refusalOf(call(dialect, await keyWith([closed.id]), 'hello there'))).status).toBe(400);
    expect(await call(dialect, await keyWith([open.id]), 'hello there')).toContain('hello there');
  });

  it('a call longer than GUARDRAIL_JUDGE_MAX_CHARS is not judged: closed blocks it, open lets it go', async () => {
    const closed = await guardrail({ kind: 'judge', question: 'Is it bad?', applies_to: ['request'], fail: 'closed' });
    const open = await guardrail({ kind: 'judge', question: 'Is it bad?', applies_to: ['request'], fail: 'open' });
    // A judge asked would say no; past the cap (4,000 here) none is asked.
    const long = `${'a long prompt '.repeat(400)}sim:call:verdict {"answer":"no"}`;
    const refusal = await refusalOf(call(dialect, await keyWith([closed.id]), long));
    expect(refusal.status).toBe(400);
    expect(guardrailIn(refusal.error)).toMatchObject({ id: closed.id, kind: 'judge' });
    expect(JSON.stringify(refusal.error)).toContain('too long for its judge');
    expect(await call(dialect, await keyWith([open.id]), long)).toContain('a long prompt');
  });

  it('a streamed reply is blocked mid-way: text first, then an error, and the upstream is let go', async () => {
    const words = await guardrail({
      kind: 'detectors',
      applies_to: ['reply'],
      detectors: [{ type: 'words', action: 'block', words: ['filler-300'] }],
    });
    const key = await keyWith([words.id]);
    // The sim's reply pads itself with numbered filler words: the blocked one comes well past the window.
    const prompt = 'tell me a long story sim-tokens:400';
    let text = '';
    let failure: unknown;
    try {
      if (dialect === 'messages') {
        const stream = await anthropicFor(stack.edge.url, key).messages.create({
          model: 'house-omni',
          max_tokens: 2000,
          stream: true,
          messages: [{ role: 'user', content: prompt }],
        });
        for await (const event of stream)
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      } else if (dialect === 'responses') {
        const stream = await openAiFor(stack.edge.url, key).responses.create({
          model: 'house',
          max_output_tokens: 2000,
          stream: true,
          input: prompt,
        });
        for await (const event of stream) {
          if (event.type === 'response.output_text.delta') text += event.delta;
          if (event.type === 'error' || event.type === 'response.failed') throw new Error(JSON.stringify(event));
        }
      } else {
        const stream = await openAiFor(stack.edge.url, key).chat.completions.create({
          model: 'house',
          max_tokens: 2000,
          stream: true,
          messages: [{ role: 'user', content: prompt }],
        });
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      }
    } catch (error) {
      failure = error;
    }
    expect(text).toContain('filler-200');
    expect(text).not.toContain('filler-300');
    expect(String((failure as Error)?.message ?? failure)).toContain(words.name);
  });
});

describe('hostile text', () => {
  // The phone scanner once stood still on a `(` or `+` right after a letter or digit, and a prompt with code in it
  // held the edge's event loop for ever: every later call on that edge hung too.
  it('a phone guardrail answers a prompt with code in it, and redacts the number that follows', async () => {
    const phone = await guardrail({ kind: 'detectors', detectors: [{ type: 'phone', action: 'redact' }] });
    const key = await keyWith([phone.id]);
    const text = await call('chat', key, 'print(x) then call(5551234567) or a+b');
    expect(text).toContain('print(x) then call([REDACTED:phone]) or a+b');
  });
});

describe('who a guardrail applies to', () => {
  const fixtures = () => teamFixtures(stack);

  it("a team's guardrail applies to every team key", async () => {
    const { user, createTeam } = fixtures();
    const owner = await user();
    const team = await createTeam(owner);
    const words = await guardrail(
      { kind: 'detectors', team_id: team.id, detectors: [{ type: 'words', action: 'block', words: ['zephyr'] }] },
      owner.key,
    );
    const patched = await stack.api('PATCH', `/v1/teams/${team.id}`, {
      key: owner.key,
      body: { guardrails: [words.id] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.guardrails).toEqual([words.id]);
    const minted = await stack.api('POST', '/v1/keys', {
      key: owner.key,
      body: { name: 'team key', preset: 'gateway', org_id: team.id },
    });
    expect(minted.status).toBe(201);
    for (const dialect of DIALECTS) {
      const refusal = await refusalOf(call(dialect, minted.body.key, 'what is zephyr'));
      expect(guardrailIn(refusal.error)).toMatchObject({ id: words.id });
    }
    // The owner's own key is not the team's: it passes.
    expect(await call('chat', owner.key, 'what is zephyr')).toContain('zephyr');
  });

  it("a team's guardrail comes off a team key only for a caller who may change the team's guardrails", async () => {
    const { user, createTeam, join } = fixtures();
    const owner = await user();
    const member = await user();
    const team = await createTeam(owner);
    await join(team.id, owner, member);
    // Keys that may edit gateway keys, but not the team.
    const keysOnly = ['gateway:invoke', 'keys:read', 'keys:write'] as const;
    const ownerKeysOnly = (await stack.seedKey({ userId: owner.id, scopes: [...keysOnly] })).secret;
    const memberKeysOnly = (await stack.seedKey({ userId: member.id, scopes: [...keysOnly] })).secret;
    const words = {
      kind: 'detectors',
      team_id: team.id,
      detectors: [{ type: 'words', action: 'block', words: ['kite'] }],
    };
    const refusedCreate = await stack.api('POST', '/v1/guardrails', {
      key: ownerKeysOnly,
      body: { name: 't', ...words },
    });
    expect(refusedCreate.status).toBe(403);
    expect(refusedCreate.body.required_scopes).toEqual(['teams:write']);
    const teamGuardrail = await guardrail(words, owner.key);
    const own = await guardrail({ kind: 'detectors', detectors: [{ type: 'email', action: 'log' }] }, owner.key);

    const teamKeyOf = async (who: { key: string }) => {
      const minted = await stack.api('POST', '/v1/keys', {
        key: who.key,
        body: { name: 'team key', preset: 'gateway', org_id: team.id },
      });
      expect(minted.status).toBe(201);
      return minted.body as { id: string; key: string };
    };
    const setOn = (key: string, id: string, guardrails: string[]) =>
      stack.api('PATCH', `/v1/keys/${id}`, { key, body: { guardrails } });

    // The owner's team key: its team guardrail stays on for a key without teams:write, whatever else changes.
    const ownerTeamKey = await teamKeyOf(owner);
    expect((await setOn(owner.key, ownerTeamKey.id, [teamGuardrail.id, own.id])).status).toBe(200);
    const shed = await setOn(ownerKeysOnly, ownerTeamKey.id, [own.id]);
    expect(shed.status).toBe(403);
    expect(shed.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['teams:write'] });
    // A key narrower than the one it edits changes none of it, its guardrails included.
    const narrow = (await stack.seedKey({ userId: owner.id, scopes: ['keys:read', 'keys:write'] })).secret;
    expect((await setOn(narrow, ownerTeamKey.id, [teamGuardrail.id])).status).toBe(403);
    const listed = await stack.api('GET', '/v1/keys?limit=100', { key: owner.key });
    const kept = (listed.body.data as Array<{ id: string; guardrails: string[] }>).find(
      (k) => k.id === ownerTeamKey.id,
    );
    expect(kept?.guardrails).toEqual([teamGuardrail.id, own.id]);
    expect((await setOn(ownerKeysOnly, ownerTeamKey.id, [teamGuardrail.id])).status).toBe(200);
    expect((await refusalOf(call('chat', ownerTeamKey.key, 'fly a kite'))).status).toBe(400);
    expect((await stack.api('DELETE', `/v1/guardrails/${teamGuardrail.id}`, { key: ownerKeysOnly })).status).toBe(403);
    // A member may add the team's guardrail to their team key, and not take it off: not even with teams:write.
    const memberTeamKey = await teamKeyOf(member);
    expect((await setOn(memberKeysOnly, memberTeamKey.id, [teamGuardrail.id])).status).toBe(200);
    expect((await setOn(memberKeysOnly, memberTeamKey.id, [])).status).toBe(403);
    expect((await setOn(member.key, memberTeamKey.id, [])).status).toBe(403);
    expect((await refusalOf(call('chat', memberTeamKey.key, 'fly a kite'))).status).toBe(400);
    // The team's owner, with teams:write, may.
    expect((await setOn(owner.key, ownerTeamKey.id, [])).status).toBe(200);
    expect(await call('chat', ownerTeamKey.key, 'fly a kite')).toContain('kite');
  });

  it('a header adds a guardrail, and one trying to remove a guardrail is ignored', async () => {
    const words = await guardrail({
      kind: 'detectors',
      detectors: [{ type: 'words', action: 'block', words: ['quasar'] }],
    });
    const plain = await keyWith([]);
    expect(await call('chat', plain, 'quasar')).toContain('quasar');
    for (const dialect of DIALECTS) {
      const added = await refusalOf(call(dialect, plain, 'quasar', { 'x-sbc-guardrails': words.id }));
      expect(guardrailIn(added.error)).toMatchObject({ id: words.id });
    }
    const guarded = await keyWith([words.id]);
    for (const remove of [`-${words.id}`, 'none', '', `!${words.id}`]) {
      const refusal = await refusalOf(call('chat', guarded, 'quasar', { 'x-sbc-guardrails': remove }));
      expect(refusal.status).toBe(400);
    }
    const unknown = await refusalOf(call('chat', plain, 'hi', { 'x-sbc-guardrails': 'grd_nope' }));
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.error)).toContain('x-sbc-guardrails');
  });

  it('a blocked call is recorded in usage with its status and the guardrail', async () => {
    const words = await guardrail({
      kind: 'detectors',
      detectors: [{ type: 'words', action: 'block', words: ['pulsar'] }],
    });
    const minted = await stack.api('POST', '/v1/keys', { key: OWNER_KEY, body: { name: 'logged', preset: 'gateway' } });
    await stack.api('PATCH', `/v1/keys/${minted.body.id}`, { key: OWNER_KEY, body: { guardrails: [words.id] } });
    expect((await refusalOf(call('chat', minted.body.key, 'pulsar'))).status).toBe(400);
    const deadline = Date.now() + 20_000;
    let rows: Array<Record<string, unknown>> = [];
    while (rows.length === 0 && Date.now() < deadline) {
      const page = await stack.api('GET', `/v1/usage/requests?key_id=${minted.body.id}`, { key: OWNER_KEY });
      rows = page.body.data;
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(rows[0]).toMatchObject({ status: 400, guardrail: { id: words.id, action: 'block' } });
  });

  it('a change to a guardrail applies from the next request', async () => {
    const words = await guardrail({
      kind: 'detectors',
      detectors: [{ type: 'words', action: 'log', words: ['nebula'] }],
    });
    const key = await keyWith([words.id]);
    expect(await call('chat', key, 'nebula')).toContain('nebula');
    const changed = await stack.api('PATCH', `/v1/guardrails/${words.id}`, {
      key: OWNER_KEY,
      body: { detectors: [{ type: 'words', action: 'block', words: ['nebula'] }] },
    });
    expect(changed.status).toBe(200);
    expect((await refusalOf(call('chat', key, 'nebula'))).status).toBe(400);
    const removed = await stack.api('DELETE', `/v1/guardrails/${words.id}`, { key: OWNER_KEY });
    expect(removed.status).toBe(204);
    expect(await call('chat', key, 'nebula')).toContain('nebula');
  });
});

describe('the guardrail routes', () => {
  const detectors = { kind: 'detectors', name: 'pii', detectors: [{ type: 'email', action: 'redact' }] };

  it('create, list, get, update, test and delete succeed', async () => {
    const made = await stack.api('POST', '/v1/guardrails', { key: OWNER_KEY, body: detectors });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      object: 'guardrail',
      name: 'pii',
      team_id: null,
      applies_to: ['request', 'reply'],
    });
    const id = made.body.id as string;
    const list = await stack.api('GET', '/v1/guardrails', { key: OWNER_KEY });
    expect(list.status).toBe(200);
    expect(list.body.data.map((item: { id: string }) => item.id)).toContain(id);
    expect((await stack.api('GET', `/v1/guardrails/${id}`, { key: OWNER_KEY })).body).toMatchObject({
      id,
      name: 'pii',
    });
    const renamed = await stack.api('PATCH', `/v1/guardrails/${id}`, { key: OWNER_KEY, body: { name: 'pii 2' } });
    expect(renamed.body).toMatchObject({ name: 'pii 2', detectors: detectors.detectors });
    const tested = await stack.api('POST', `/v1/guardrails/${id}/test`, {
      key: OWNER_KEY,
      body: { text: 'mail jo@example.org' },
    });
    expect(tested.body).toMatchObject({
      blocked: false,
      blocked_by: null,
      text: 'mail [REDACTED:email]',
      redacted: ['email'],
      logged: [],
    });
    expect((await stack.api('DELETE', `/v1/guardrails/${id}`, { key: OWNER_KEY })).status).toBe(204);
    expect((await stack.api('GET', `/v1/guardrails/${id}`, { key: OWNER_KEY })).status).toBe(404);
  });

  it('refuse bad settings with 400, naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...detectors, detectors: [{ type: 'regex', action: 'block', pattern: '(a)\\1' }] }, 'detectors.0.pattern'],
      [{ ...detectors, detectors: [] }, 'detectors'],
      [{ kind: 'webhook', name: 'w', url: 'ftp://x' }, 'url'],
      [{ kind: 'judge', name: 'j', question: '' }, 'question'],
      [{ kind: 'judge', name: 'j', question: 'Is it bad?', max_tokens: 5_000 }, 'max_tokens'],
      [{ kind: 'unknown', name: 'x' }, 'kind'],
    ];
    for (const [body, path] of cases) {
      const refused = await stack.api('POST', '/v1/guardrails', { key: OWNER_KEY, body });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain(path);
    }
    const made = await stack.api('POST', '/v1/guardrails', { key: OWNER_KEY, body: detectors });
    const id = made.body.id as string;
    expect((await stack.api('PATCH', `/v1/guardrails/${id}`, { key: OWNER_KEY, body: { name: '' } })).status).toBe(400);
    expect((await stack.api('POST', `/v1/guardrails/${id}/test`, { key: OWNER_KEY, body: {} })).status).toBe(400);
    const badAttach = await stack.api('POST', '/v1/keys', { key: OWNER_KEY, body: { name: 'k', preset: 'gateway' } });
    const attach = await stack.api('PATCH', `/v1/keys/${badAttach.body.id}`, {
      key: OWNER_KEY,
      body: { guardrails: ['grd_not_mine'] },
    });
    expect(attach.status).toBe(400);
  });

  it('refuse a caller without a credential (401) and a key without the scope (403)', async () => {
    const made = await stack.api('POST', '/v1/guardrails', { key: OWNER_KEY, body: detectors });
    const id = made.body.id as string;
    const narrow = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/v1/guardrails'],
      ['POST', '/v1/guardrails', detectors],
      ['GET', `/v1/guardrails/${id}`],
      ['PATCH', `/v1/guardrails/${id}`, { name: 'x' }],
      ['DELETE', `/v1/guardrails/${id}`],
      ['POST', `/v1/guardrails/${id}/test`, { text: 'x' }],
    ];
    for (const [method, path, body] of routes) {
      expect((await stack.api(method, path, { body })).status).toBe(401);
      expect((await stack.api(method, path, { key: narrow.secret, body })).status).toBe(403);
    }
  });

  it("another account's guardrail is 404, and cannot be attached", async () => {
    const made = await stack.api('POST', '/v1/guardrails', { key: OWNER_KEY, body: detectors });
    const other = await stack.seedKey({ userId: await stack.seedUser() });
    expect((await stack.api('GET', `/v1/guardrails/${made.body.id}`, { key: other.secret })).status).toBe(404);
    expect((await stack.api('DELETE', `/v1/guardrails/${made.body.id}`, { key: other.secret })).status).toBe(404);
  });
});

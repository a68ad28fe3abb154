import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import type { MessageBatch } from '@anthropic-ai/sdk/resources/messages/batches';
import { newId } from '@sbc/ids';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import { rejectionOf } from '@sbc/testing';
import { chatLine, createChatBatch, ended, jsonl, untilBatch } from '../support/batches';
import { usageRows, type UsageRow } from '../support/usage-rows';
import { OWNER_KEY, anthropicFor, openAiFor, startStack, type HouseSpec, type StackWith } from '../support/stack';
import { teamFixtures, type TeamUser } from '../support/teams.harness';

/**
 * OpenAI batches through the edge with the official `openai` SDK (docs/batches.md): a file uploaded, a batch
 * created over it, polled to `completed`, its output file read back; each line a model call through the edge
 * (one usage row each, as the same call would make), a cancelled batch stops new lines and keeps what ran, and a
 * runs service stopped mid-batch leaves its lines to the next one, which finishes the batch.
 */

/**
 * `house-fast` is pointed at the sim's `sim-slow` here, which answers after SLOW_LINE_MS: lines that are still in
 * flight when a test acts. (House model names are a fixed set; the name says nothing in this suite.)
 */
const house = (simUrl: string): HouseSpec => ({
  house: [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large' }],
  'house-fast': [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-slow' }],
  // A house model whose first engine always fails (503): its calls are answered by the second.
  'house-omni': [
    { dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-error-503' },
    { dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large' },
  ],
});

/**
 * Long enough that a test acts (cancels, expires, stops the runs service) while the lane's first eight lines are
 * in flight; every wait for a slow line costs this much, so it is seconds, not the sim's default 10 s.
 */
const SLOW_LINE_MS = 3_000;
/**
 * A line claimed by a stopped runs service is claimed again once its lease runs out; the lane cuts a call at 80 %
 * of it, so it is well past SLOW_LINE_MS.
 */
const LEASE_MS = 8_000;

let stack: StackWith<{ label: string; ledger: object; runs: object }>;
let teams: ReturnType<typeof teamFixtures>;
/** The runs service serving now (the restart test replaces the stack's first one). */
let runs: { database: { prisma: (typeof stack.runs)['database']['prisma'] } };

beforeAll(async () => {
  stack = await startStack({
    label: 'batches',
    house,
    simSlowMs: SLOW_LINE_MS,
    ledger: {},
    runs: {
      env: { RUNS_WORKERS: '0', BATCHES_WORKERS: '8', BATCHES_POLL_MS: '100', BATCHES_LEASE_MS: String(LEASE_MS) },
    },
    edgeEnv: { RATE_LIMIT_PER_MINUTE: '100000' },
  });
  teams = teamFixtures(stack);
  runs = stack.runs;
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

async function account(): Promise<{ user: TeamUser; openai: OpenAI }> {
  const user = await teams.user();
  return { user, openai: openAiFor(stack.edge.url, user.key) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The account's usage rows of batch lines, once the ledger holds at least `count` (it applies them shortly after). */
async function batchUsage(user: TeamUser, count: number): Promise<UsageRow[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = (await usageRows(stack.edge.url, user.key)).filter((row) => /^(msg)?batch_req_/.test(row.request_id));
    if (lines.length >= count || Date.now() > deadline) return lines;
    await sleep(250);
  }
}

describe('a chat batch', () => {
  it('200 lines run to completed: every result in the output file, one usage row per line, tokens summed', async () => {
    const { user, openai } = await account();
    const ids = Array.from({ length: 200 }, (_, index) => `line-${index}`);
    const created = await createChatBatch(
      openai,
      ids.map((id) => chatLine(id)),
      { job: 'nightly' },
    );
    expect((await openai.files.retrieve(created.input_file_id)).purpose).toBe('batch');
    expect(created).toMatchObject({
      id: expect.stringMatching(/^batch_/),
      object: 'batch',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      status: 'validating',
      request_counts: { total: 200, completed: 0, failed: 0 },
      metadata: { job: 'nightly' },
    });
    const done = await untilBatch(openai, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 200, completed: 200, failed: 0 } });
    expect(done.error_file_id).toBeNull();
    expect(done.in_progress_at).toEqual(expect.any(Number));
    expect(done.completed_at).toEqual(expect.any(Number));

    const output = await jsonl(openai, done.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual([...ids].sort());
    for (const line of output) {
      expect(line).toMatchObject({
        id: expect.stringMatching(/^batch_req_/),
        response: { status_code: 200, body: { object: 'chat.completion', model: 'house' } },
        error: null,
      });
    }
    expect((await openai.files.retrieve(done.output_file_id!)).purpose).toBe('batch_output');

    const usage = await batchUsage(user, 200);
    expect(usage).toHaveLength(200);
    expect(new Set(usage.map((row) => row.request_id))).toEqual(new Set(output.map((line) => line.id)));
    // The lane's key is the batch's: each answered line is billed under its own id.
    for (const row of usage) expect(row.id).toBe(row.request_id);
    const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
    expect(sum(usage.map((row) => row.native_tokens_prompt))).toBe(
      sum(output.map((line) => line.response.body.usage.prompt_tokens as number)),
    );
    expect(sum(usage.map((row) => row.native_tokens_completion))).toBe(
      sum(output.map((line) => line.response.body.usage.completion_tokens as number)),
    );
    // Listed, newest first.
    expect((await openai.batches.list()).data.map((batch) => batch.id)).toEqual([created.id]);
  }, 180_000);

  it('a line the edge refuses (a model the key may not call) is in the error file with its answer', async () => {
    const user = await teams.user();
    const minted = await stack.api('POST', '/v1/keys', {
      key: user.key,
      body: { name: 'house only', allowed_models: ['house'] },
    });
    expect(minted.status).toBe(201);
    const openai = openAiFor(stack.edge.url, minted.body.key as string);
    const created = await createChatBatch(openai, [chatLine('ok'), chatLine('no', 'house-fast')]);
    const done = await untilBatch(openai, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 } });
    expect((await jsonl(openai, done.output_file_id)).map((line) => line.custom_id)).toEqual(['ok']);
    const [failed] = await jsonl(openai, done.error_file_id);
    expect(failed).toMatchObject({ custom_id: 'no', response: { status_code: 403 } });
  }, 60_000);
});

describe("billed once: an answered line's usage event id is the line's id", () => {
  let accountRpc: RpcClientOf<typeof AccountService>;
  beforeAll(() => {
    accountRpc = createRpcClient(AccountService, { target: stack.account.grpcAddress, deadlineMs: 10_000 });
  });
  afterAll(() => accountRpc?.close());

  /** A key minted as the batch lane mints one (CreateKey naming its batch), and that batch's line ids. */
  async function batchKey(user: TeamUser, allowedModels?: string[]) {
    const ulid = newId('req').slice('req_'.length);
    const reply = await accountRpc.createKey({
      caller: { userId: user.id },
      name: `batch batch_${ulid}`,
      scopes: ['gateway:invoke'],
      allowedModels: allowedModels && { values: allowedModels },
      route: 'auto',
      mode: 'agent',
      batchId: `batch_${ulid}`,
    });
    expect(reply.key?.batchId).toBe(`batch_${ulid}`);
    return { secret: reply.secret, line: (n: number) => `batch_req_${ulid}_${n}` };
  }

  const call = (key: string, requestId: string, model = 'house') =>
    stack.api('POST', '/v1/chat/completions', {
      key,
      headers: { 'x-request-id': requestId },
      body: { model, messages: [{ role: 'user', content: 'Say once' }], max_tokens: 16 },
    });

  /**
   * The usage rows of `requestId`, once the ledger has applied a call the account made after them (one account's
   * events are applied in the order they were sent).
   */
  async function rowsOf(user: TeamUser, requestId: string): Promise<UsageRow[]> {
    const later = newId('req');
    expect((await call(user.key, later)).status).toBe(200);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await usageRows(stack.edge.url, user.key);
      if (rows.some((row) => row.request_id === later)) return rows.filter((row) => row.request_id === requestId);
      if (Date.now() > deadline) throw new Error(`the ledger did not apply ${later} in time`);
      await sleep(250);
    }
  }

  it('a line called again after its answer (its settle lost to a crash) is one usage row, under its id', async () => {
    const user = await teams.user();
    const key = await batchKey(user);
    const line = key.line(1);
    const first = await call(key.secret, line);
    const again = await call(key.secret, line);
    expect([first.status, again.status]).toEqual([200, 200]);
    const rows = await rowsOf(user, line);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: line, status: 200, native_tokens_prompt: first.body.usage.prompt_tokens });
  });

  it("no other key chooses its event id: a user's or another batch's key sending a line pays each time", async () => {
    const user = await teams.user();
    const line = (await batchKey(user)).line(2);
    const otherBatch = await batchKey(user);
    for (const secret of [user.key, user.key, otherBatch.secret, otherBatch.secret])
      expect((await call(secret, line)).status).toBe(200);
    const rows = await rowsOf(user, line);
    expect(rows).toHaveLength(4);
    expect(new Set(rows.map((row) => row.id)).size).toBe(4);
    for (const row of rows) expect(row.id).toMatch(/^evt_/);
  });

  it("a line refused and then answered keeps both rows: only the answer takes the line's id", async () => {
    const user = await teams.user();
    const key = await batchKey(user, ['house']);
    const line = key.line(3);
    expect((await call(key.secret, line, 'house-fast')).status).toBe(403);
    expect((await call(key.secret, line)).status).toBe(200);
    const rows = await rowsOf(user, line);
    expect(rows.map((row) => [row.status, row.id === line])).toEqual(
      expect.arrayContaining([
        [200, true],
        [403, false],
      ]),
    );
    expect(rows).toHaveLength(2);
  });

  it('the account service refuses a batch key whose batch id is not a batch id', async () => {
    const user = await teams.user();
    const refused = await rejectionOf(
      accountRpc.createKey({
        caller: { userId: user.id },
        name: 'not a batch',
        scopes: ['gateway:invoke'],
        route: 'auto',
        mode: 'agent',
        batchId: 'batch_1',
      }),
    );
    expect(refused).toMatchObject({ code: 'invalid_request', param: 'batch_id' });
  });
});

describe('cancel and restart', () => {
  it('cancel stops new lines at once; the ones in flight finish and are in the output file', async () => {
    const { openai } = await account();
    const ids = Array.from({ length: 30 }, (_, index) => `slow-${index}`);
    const created = await createChatBatch(
      openai,
      ids.map((id) => chatLine(id, 'house-fast')),
    );
    await untilBatch(openai, created.id, (batch) => batch.status === 'in_progress');
    const cancelling = await openai.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toEqual(expect.any(Number));
    const done = await untilBatch(openai, created.id, ended, 60_000);
    expect(done.status).toBe('cancelled');
    const output = await jsonl(openai, done.output_file_id);
    const errors = await jsonl(openai, done.error_file_id);
    // At most the lane's eight were in flight; they finished, the rest never started.
    expect(output.length).toBeGreaterThan(0);
    expect(output.length).toBeLessThanOrEqual(8);
    expect(done.request_counts).toMatchObject({ total: 30, completed: output.length, failed: 0 });
    expect(errors).toHaveLength(30 - output.length);
    expect(errors[0]).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
    // Cancelling an ended batch returns it as it is.
    expect((await openai.batches.cancel(created.id)).status).toBe('cancelled');
  }, 90_000);

  it('a runs service stopped mid-batch leaves its lines to the next, which finishes with each line once', async () => {
    const { user, openai } = await account();
    const ids = Array.from({ length: 12 }, (_, index) => `r-${index}`);
    const created = await createChatBatch(
      openai,
      ids.map((id) => chatLine(id, 'house-fast')),
    );
    await untilBatch(openai, created.id, (batch) => batch.request_counts!.completed >= 8, 60_000);
    const port = stack.runs.grpcAddress.split(':').pop()!;
    await stack.runs.stop();
    runs = await stack.startRunsService({ RUNS_GRPC_PORT: port });
    const done = await untilBatch(openai, created.id, ended, 120_000);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 12, completed: 12, failed: 0 } });
    const output = await jsonl(openai, done.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual([...ids].sort());
    // Lines cut by the stop were answered to no one (499, nothing billed); each line has one billed call.
    const billed = (await batchUsage(user, 12)).filter((row) => row.status === 200);
    expect(billed.map((row) => row.request_id).sort()).toEqual(output.map((line) => line.id).sort());
  }, 180_000);
});

describe('expiry', () => {
  it('a batch past its window stops starting lines, lets those in flight finish and ends expired', async () => {
    const { openai } = await account();
    const ids = Array.from({ length: 30 }, (_, index) => `e-${index}`);
    const created = await createChatBatch(
      openai,
      ids.map((id) => chatLine(id, 'house-fast')),
    );
    await untilBatch(openai, created.id, (batch) => batch.status === 'in_progress');
    // The window ends now (24 h is too long to wait for).
    await runs.database.prisma.batch.update({ where: { id: created.id }, data: { expiresAt: new Date() } });
    const done = await untilBatch(openai, created.id, ended, 60_000);
    expect(done.status).toBe('expired');
    expect(done.expired_at).toEqual(expect.any(Number));
    const output = await jsonl(openai, done.output_file_id);
    const errors = await jsonl(openai, done.error_file_id);
    expect(output.length).toBeLessThanOrEqual(8);
    expect(output.length + errors.length).toBe(30);
    expect(errors.every((line) => line.error?.code === 'batch_expired')).toBe(true);
  }, 90_000);
});

describe('refusals', () => {
  it("another account's batch is 404; a file of another endpoint or purpose is 400 naming input_file_id", async () => {
    const owner = await account();
    const other = await account();
    const created = await createChatBatch(owner.openai, [chatLine('a')]);
    const input = { id: created.input_file_id };
    expect(await rejectionOf(other.openai.batches.retrieve(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await rejectionOf(other.openai.batches.cancel(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await other.openai.batches.list()).data).toEqual([]);
    expect(
      await rejectionOf(
        other.openai.batches.create({
          input_file_id: input.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        }),
      ),
    ).toBeInstanceOf(OpenAI.NotFoundError);

    const wrongEndpoint = await rejectionOf(
      owner.openai.batches.create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' }),
    );
    expect(wrongEndpoint).toBeInstanceOf(OpenAI.BadRequestError);
    expect((wrongEndpoint as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input_file_id');
    expect((wrongEndpoint as Error).message).toContain('line 1');
    const data = await owner.openai.files.create({
      file: await toFile(Buffer.from('x'), 'x.txt'),
      purpose: 'user_data',
    });
    const wrongPurpose = await rejectionOf(
      owner.openai.batches.create({
        input_file_id: data.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
    );
    expect((wrongPurpose as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input_file_id');
    await untilBatch(owner.openai, created.id);
  }, 60_000);

  it('needs gateway:invoke (403 insufficient_scope); a bad body is 400 naming the field', async () => {
    const { user } = await account();
    const narrow = await stack.seedKey({ userId: user.id, scopes: ['usage:read'] });
    for (const [method, path] of [
      ['GET', '/v1/batches'],
      ['POST', '/v1/batches'],
      ['GET', '/v1/batches/batch_1'],
      ['POST', '/v1/batches/batch_1/cancel'],
    ] as const) {
      expect((await stack.api(method, path)).status).toBe(401);
      const forbidden = await stack.api(method, path, { key: narrow.secret });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['gateway:invoke'] });
    }
    const badWindow = await stack.api('POST', '/v1/batches', {
      key: user.key,
      body: { input_file_id: 'file-1', endpoint: '/v1/chat/completions', completion_window: '1h' },
    });
    expect(badWindow.status).toBe(400);
    expect(badWindow.body).toMatchObject({ error: { param: 'completion_window' } });
  });
});

describe('Anthropic message batches', () => {
  /** The SDK fetches `results_url`, which is on the edge's public URL (BASE_URL, https://gw.test here). */
  const anthropicOf = (key: string) =>
    new Anthropic({
      apiKey: key,
      baseURL: stack.edge.url,
      maxRetries: 0,
      fetch: (url: string | URL | Request, init?: RequestInit) =>
        fetch(String(url).replace('https://gw.test', stack.edge.url), init),
    });

  async function untilEnded(anthropic: Anthropic, id: string, timeoutMs = 120_000): Promise<MessageBatch> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const batch = await anthropic.messages.batches.retrieve(id);
      if (batch.processing_status === 'ended') return batch;
      if (Date.now() > deadline) throw new Error(`message batch ${id} stuck: ${JSON.stringify(batch)}`);
      await sleep(250);
    }
  }

  const request = (customId: string, model = 'house') => ({
    custom_id: customId,
    params: { model, max_tokens: 16, messages: [{ role: 'user' as const, content: `Say ${customId}` }] },
  });

  it('50 requests end with every result in order; one usage row each; listed, then deleted', async () => {
    const user = await teams.user();
    const anthropic = anthropicOf(user.key);
    const ids = Array.from({ length: 50 }, (_, index) => `m-${index}`);
    const created = await anthropic.messages.batches.create({ requests: ids.map((id) => request(id)) });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^msgbatch_/),
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: 50, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      results_url: null,
      archived_at: null,
    });
    expect(Date.parse(created.created_at)).not.toBeNaN();
    const batch = await untilEnded(anthropic, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 50, errored: 0, canceled: 0, expired: 0 });
    expect(batch.results_url).toBe(`https://gw.test/v1/messages/batches/${created.id}/results`);
    const results = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((result) => result.custom_id)).toEqual(ids);
    for (const result of results) {
      expect(result.result).toMatchObject({ type: 'succeeded', message: { type: 'message', role: 'assistant' } });
    }
    const usage = await batchUsage(user, 50);
    expect(usage).toHaveLength(50);
    const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
    expect(sum(usage.map((row) => row.native_tokens_completion))).toBe(
      sum(
        results.map((result) => (result.result.type === 'succeeded' ? result.result.message.usage.output_tokens : 0)),
      ),
    );

    const page = await anthropic.messages.batches.list({ limit: 10 });
    expect(page.data.map((listed) => listed.id)).toEqual([created.id]);
    // An OpenAI client does not see it among its batches.
    expect((await openAiFor(stack.edge.url, user.key).batches.list()).data).toEqual([]);
    expect(await anthropic.messages.batches.delete(created.id)).toMatchObject({
      id: created.id,
      type: 'message_batch_deleted',
    });
    expect(await rejectionOf(anthropic.messages.batches.retrieve(created.id))).toBeInstanceOf(Anthropic.NotFoundError);
  }, 180_000);

  it('cancel: in-flight requests finish, the rest canceled; results and delete wait for the end (409)', async () => {
    const user = await teams.user();
    const anthropic = anthropicOf(user.key);
    const created = await anthropic.messages.batches.create({
      requests: Array.from({ length: 20 }, (_, index) => request(`s-${index}`, 'house-fast')),
    });
    const early = await rejectionOf(anthropic.messages.batches.delete(created.id));
    expect(early).toBeInstanceOf(Anthropic.APIError);
    expect((early as InstanceType<typeof Anthropic.APIError>).status).toBe(409);
    const notYet = await stack.api('GET', `/v1/messages/batches/${created.id}/results`, { key: user.key });
    expect(notYet.status).toBe(409);
    expect(notYet.body).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    const canceling = await anthropic.messages.batches.cancel(created.id);
    expect(canceling.processing_status).toBe('canceling');
    expect(canceling.cancel_initiated_at).toEqual(expect.any(String));
    const batch = await untilEnded(anthropic, created.id, 60_000);
    const counts = batch.request_counts;
    expect(counts.succeeded + counts.canceled).toBe(20);
    expect(counts.canceled).toBeGreaterThanOrEqual(12);
    const results = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result.result.type);
    expect(results.filter((type) => type === 'canceled')).toHaveLength(counts.canceled);
  }, 90_000);

  it("another account's batch is 404 in Anthropic's shape; a bad request is 400 naming it", async () => {
    const owner = await teams.user();
    const other = await teams.user();
    const created = await anthropicOf(owner.key).messages.batches.create({ requests: [request('a')] });
    const hidden = await rejectionOf(anthropicFor(stack.edge.url, other.key).messages.batches.retrieve(created.id));
    expect(hidden).toBeInstanceOf(Anthropic.NotFoundError);
    const bad = await stack.api('POST', '/v1/messages/batches', {
      key: owner.key,
      body: { requests: [request('a'), request('a')] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const noModel = await stack.api('POST', '/v1/messages/batches', {
      key: owner.key,
      body: { requests: [{ custom_id: 'x', params: { max_tokens: 1, messages: [] } }] },
    });
    expect(noModel.status).toBe(400);
  }, 60_000);
});

describe('a failing target', () => {
  it('lines fall back by the routing rules; a line whose targets all fail ends in the error file', async () => {
    // Only an operator's key may save an endpoint on a loopback address such as the sim's.
    const saved = await stack.api('POST', '/v1/upstreams', {
      key: OWNER_KEY,
      body: { label: 'down', slug: 'down', base_url: `${stack.sim.url}/v1`, dialect: 'openai', api_key: 'sk-x' },
    });
    expect(saved.status).toBe(201);
    const openai = openAiFor(stack.edge.url, OWNER_KEY);
    const created = await createChatBatch(openai, [
      chatLine('fell-back-1', 'house-omni'),
      chatLine('fell-back-2', 'house-omni'),
      chatLine('down', 'down/sim-error-503'),
    ]);
    const done = await untilBatch(openai, created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });

    const output = await jsonl(openai, done.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual(['fell-back-1', 'fell-back-2']);
    for (const line of output) {
      expect(line).toMatchObject({ error: null, response: { status_code: 200, body: { model: 'house-omni' } } });
    }
    const errors = await jsonl(openai, done.error_file_id);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ custom_id: 'down', response: { status_code: 503 } });

    // The answered lines' rows show the failing engine was tried first (a later line may skip it while it cools
    // down, so at least one row, not every one); the failing line was called once per lane attempt (5), each
    // refused attempt billed nothing.
    const ofBatch = (row: UsageRow) => row.request_id.startsWith(created.id.replace(/^batch_/, 'batch_req_'));
    const deadline = Date.now() + 30_000;
    let rows = (await usageRows(stack.edge.url, OWNER_KEY)).filter(ofBatch);
    while (rows.length < 7 && Date.now() < deadline) {
      await sleep(250);
      rows = (await usageRows(stack.edge.url, OWNER_KEY)).filter(ofBatch);
    }
    const answered = rows.filter((row) => row.status === 200);
    expect(answered).toHaveLength(2);
    expect(answered.every((row) => row.served_by === 'house')).toBe(true);
    expect(Math.max(...answered.map((row) => row.attempts))).toBeGreaterThanOrEqual(2);
    const refused = rows.filter((row) => row.status !== 200);
    expect(refused).toHaveLength(5);
    // 503 from the endpoint, or 429 while every target of the route cools down after it.
    expect(refused.every((row) => [429, 503].includes(row.status) && row.credits_charged === 0)).toBe(true);
    expect(refused.some((row) => row.status === 503 && row.served_by === 'byo:down')).toBe(true);
  }, 120_000);
});

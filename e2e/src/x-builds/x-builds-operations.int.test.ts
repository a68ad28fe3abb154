import { startStack, type XbJob, type XBuildsStack } from '../support/stack';

const settled = (job: XbJob) => ['done', 'refused', 'failed', 'cancelled'].includes(job.status);
let post = 1_000_000;
const nextPostId = () => String((post += 1));

describe('x builds: intake refusals, the ordered queue, operator controls and recovery', () => {
  let stack: XBuildsStack;
  let key: string;
  let reader: string;
  let blocker: string;

  beforeAll(async () => {
    // A short lease, so a build abandoned by a stopped worker is recovered within seconds.
    stack = await startStack({
      label: 'xb_operations',
      simTokensPerSecond: 200,
      builds: { env: { X_BUILDS_LEASE_MS: '1500', X_BUILDS_AUTHOR_DAILY_LIMIT: '3' } },
    });
    key = (await stack.seedKey({ scopes: ['builds:read', 'builds:write', 'builds:admin', 'gateway:invoke'] })).secret;
    reader = (await stack.seedKey({ scopes: ['builds:read', 'builds:write'] })).secret;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const submitX = (
    authorId: string,
    options: {
      conversationId?: string;
      postId?: string;
      text?: string;
      key?: string;
      headers?: Record<string, string>;
    } = {},
  ) =>
    stack.api('POST', '/v1/x-builds', {
      key: options.key ?? key,
      headers: options.headers,
      body: {
        source: {
          type: 'x',
          post_id: options.postId ?? nextPostId(),
          author_id: authorId,
          ...(options.conversationId ? { conversation_id: options.conversationId } : {}),
          text: options.text ?? `@builder a tiny game for ${authorId}`,
        },
      },
    });
  const queue = async () => (await stack.api('GET', '/v1/x-builds/queue', { key })).body;
  const patchQueue = async (body: Record<string, unknown>) => {
    const answer = await stack.api('PATCH', '/v1/x-builds/queue', { key, body });
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const allJobs = async () =>
    (await stack.api('GET', '/v1/x-builds?platform=all&limit=200', { key })).body.data as XbJob[];
  const cancel = async (id: string) =>
    expect((await stack.api('POST', `/v1/x-builds/${id}/cancel`, { key })).status).toBe(200);

  it('holds the single build slot with a long build, so later jobs wait in the queue', async () => {
    expect(await patchQueue({ max_concurrent: 1 })).toMatchObject({
      max_concurrent: 1,
      effective_concurrency: 1,
      paused: false,
    });
    const answer = await submitX('blocker', { text: 'a long page sim-tokens:16000' });
    expect(answer.status).toBe(201);
    blocker = answer.body.id;
    await stack.waitForJob(key, blocker, (job) => job.status === 'building');
    expect(await queue()).toMatchObject({ running: 1, queued: 0 });
  });

  it(
    'answers a repeated post id or idempotency key with the ' + 'first job (200, existing) and never queues it twice',
    async () => {
      const postId = nextPostId();
      const first = await submitX('idem-author', { postId });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ status: 'queued', position: 1, eta_s: expect.any(Number) });
      const repeat = await submitX('idem-author', { postId, text: 'different text, same post' });
      expect(repeat.status).toBe(200);
      expect(repeat.body).toEqual({
        id: first.body.id,
        status: 'queued',
        position: 1,
        eta_s: expect.any(Number),
        existing: true,
        request_id: expect.any(String),
      });

      const prompt = { source: { type: 'api', prompt: 'A counter app' } };
      const headers = { 'idempotency-key': 'order-7781' };
      const created = await stack.api('POST', '/v1/x-builds', { key: reader, body: prompt, headers });
      expect(created.status).toBe(201);
      const again = await stack.api('POST', '/v1/x-builds', { key: reader, body: prompt, headers });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: created.body.id, existing: true });
      await cancel(first.body.id);
      await cancel(created.body.id);
    },
  );

  it(
    'refuses, in its fixed order and without leaving a job, a blocked author, paused intake, an active author or ' +
      'conversation and a full queue',
    async () => {
      const before = (await allJobs()).length;
      const active = await submitX('author-a', { conversationId: '777' });
      expect(active.status).toBe(201);

      const sameAuthor = await submitX('author-a');
      expect(sameAuthor.status).toBe(409);
      expect(sameAuthor.body).toMatchObject({ error: 'author_active_job' });
      const sameConversation = await submitX('author-b', { conversationId: '777' });
      expect(sameConversation.status).toBe(409);
      expect(sameConversation.body).toMatchObject({
        error: 'conversation_active_job',
        param: 'source.conversation_id',
      });

      const queued = (await queue()).queued;
      await patchQueue({ max_queue: queued });
      const full = await submitX('author-c');
      expect(full.status).toBe(503);
      expect(full.body.error).toBe('queue_full');
      // An active job is refused as such before the queue is found full.
      expect((await submitX('author-a')).body.error).toBe('author_active_job');
      await patchQueue({ max_queue: 100 });

      const blocked = await stack.api('PUT', '/v1/x-builds/blocklist/author-d', { key, body: {} });
      expect(blocked.status).toBe(200);
      expect(blocked.body).toMatchObject({ author_id: 'author-d', reason: 'operator', created_at: expect.any(String) });
      expect((await stack.api('GET', '/v1/x-builds/blocklist', { key })).body.data).toEqual([
        expect.objectContaining({ author_id: 'author-d', reason: 'operator' }),
      ]);
      expect(await patchQueue({ paused: true })).toMatchObject({ paused: true, paused_reason: 'operator' });
      // Blocked is decided before paused; paused before anything about the author's jobs.
      const blockedWhilePaused = await submitX('author-d');
      expect(blockedWhilePaused.status).toBe(403);
      expect(blockedWhilePaused.body.error).toBe('author_blocked');
      const paused = await submitX('author-a');
      expect(paused.status).toBe(503);
      expect(paused.body.error).toBe('intake_paused');
      await patchQueue({ paused: false });
      expect((await stack.api('DELETE', '/v1/x-builds/blocklist/author-d', { key })).body).toMatchObject({
        author_id: 'author-d',
        deleted: true,
      });
      expect((await stack.api('DELETE', '/v1/x-builds/blocklist/author-d', { key })).status).toBe(404);

      expect((await allJobs()).length).toBe(before + 1);
      await cancel(active.body.id);
    },
  );

  it("refuses an author's build past the daily limit with 429 and Retry-After until midnight UTC", async () => {
    for (let i = 0; i < 3; i += 1) {
      const answer = await submitX('daily-author');
      expect(answer.status).toBe(201);
      await cancel(answer.body.id);
    }
    const over = await submitX('daily-author');
    expect(over.status).toBe(429);
    expect(over.body.error).toBe('author_daily_limit');
    const retryAfter = Number(over.headers.get('retry-after'));
    const now = new Date();
    const toMidnight = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
    expect(retryAfter).toBeGreaterThan(0);
    expect(Math.abs(retryAfter - toMidnight)).toBeLessThan(60);
  });

  it('admits exactly one of 20 simultaneous submits by one author; the rest are 409 author_active_job', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => submitX('racer')));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(19);
    for (const answer of answers.filter((a) => a.status === 409)) expect(answer.body.error).toBe('author_active_job');
    expect((await allJobs()).filter((job) => job.author_id === 'racer')).toHaveLength(1);
    await cancel(answers.find((answer) => answer.status === 201)!.body.id);
  });

  it('dispatches in (pinned, position) order after pin, move, unpin and requeue at the front', async () => {
    const ids: string[] = [];
    for (const author of ['o1', 'o2', 'o3', 'o4']) ids.push((await submitX(author)).body.id);
    const [j1, j2, j3, j4] = ids as [string, string, string, string];
    expect((await queue()).order).toEqual([j1, j2, j3, j4]);

    const pinned = await stack.api('POST', `/v1/x-builds/${j3}/pin`, { key });
    expect(pinned.body).toMatchObject({ id: j3, pinned: true, position: 1 });
    expect((await queue()).order).toEqual([j3, j1, j2, j4]);

    expect((await stack.api('POST', `/v1/x-builds/${j4}/move`, { key, body: { before_id: j1 } })).body).toMatchObject({
      position: 2,
    });
    expect((await queue()).order).toEqual([j3, j4, j1, j2]);
    await stack.api('POST', `/v1/x-builds/${j1}/move`, { key, body: { after_id: j2 } });
    expect((await queue()).order).toEqual([j3, j4, j2, j1]);
    // Moving before a pinned job joins the pinned group.
    expect((await stack.api('POST', `/v1/x-builds/${j2}/move`, { key, body: { before_id: j3 } })).body).toMatchObject({
      pinned: true,
      position: 1,
    });
    expect((await queue()).order).toEqual([j2, j3, j4, j1]);
    await stack.api('POST', `/v1/x-builds/${j2}/unpin`, { key });
    await stack.api('POST', `/v1/x-builds/${j3}/unpin`, { key });
    expect((await queue()).order).toEqual([j2, j3, j4, j1]);

    await cancel(j4);
    const requeued = await stack.api('POST', `/v1/x-builds/${j4}/requeue`, { key });
    expect(requeued.status).toBe(200);
    expect(requeued.body).toMatchObject({ status: 'queued', position: 1 });
    expect((await queue()).order).toEqual([j4, j2, j3, j1]);
    const listed = (await stack.api('GET', `/v1/x-builds/${j1}`, { key })).body;
    expect(listed.position).toBe(4);

    // Resume needs a bundle; queue operations need a queued job; a bad body is 400.
    await cancel(j1);
    expect((await stack.api('POST', `/v1/x-builds/${j1}/resume`, { key })).body).toMatchObject({ error: 'conflict' });
    expect((await stack.api('POST', `/v1/x-builds/${j1}/pin`, { key })).status).toBe(409);
    expect(
      (await stack.api('POST', `/v1/x-builds/${j2}/move`, { key, body: { before_id: j3, after_id: j4 } })).status,
    ).toBe(400);
    expect((await stack.api('POST', '/v1/x-builds/xbj_00000000000000000000000000/pin', { key })).status).toBe(404);
    for (const id of [j2, j3, j4]) await cancel(id);
  });

  it(
    'lists only the account’s jobs, newest first, with filters ' +
      'and cursor paging; unknown status or platform is 400',
    async () => {
      const page = await stack.api('GET', '/v1/x-builds?limit=2', { key });
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(2);
      expect(page.body.has_more).toBe(true);
      expect(page.body.data.every((job: XbJob) => job.lane === 'x')).toBe(true);
      const next = await stack.api('GET', `/v1/x-builds?limit=2&cursor=${page.body.next_cursor}`, { key });
      expect(next.body.data[0].id < page.body.data[1].id).toBe(true);
      const byAuthor = await stack.api('GET', '/v1/x-builds?author_id=daily-author&status=cancelled', { key });
      expect(byAuthor.body.data).toHaveLength(3);
      expect(
        (await stack.api('GET', '/v1/x-builds?platform=api', { key: reader })).body.data.map(
          (job: XbJob) => job.prompt,
        ),
      ).toEqual(['A counter app']);
      for (const query of ['status=stuck', 'platform=mastodon', 'limit=0', 'limit=201', 'cursor=nope']) {
        const bad = await stack.api('GET', `/v1/x-builds?${query}`, { key });
        expect({ query, status: bad.status, error: bad.body.error }).toEqual({
          query,
          status: 400,
          error: 'invalid_request',
        });
      }
      expect((await stack.api('GET', '/v1/x-builds/stats?window=2d', { key })).status).toBe(400);
      // A key without builds:admin cannot reach the operator routes.
      expect((await stack.api('GET', '/v1/x-builds/queue', { key: reader })).body).toMatchObject({
        error: 'insufficient_scope',
        required_scopes: ['builds:admin'],
      });
    },
  );

  it(
    'recovers a build whose worker was stopped mid-stage: ' + 're-claimed after its lease, resumed and finished',
    async () => {
      await cancel(blocker);
      const slow = await submitX('crash-author', { text: 'a slow page sim-tokens:1200' });
      expect(slow.status).toBe(201);
      await stack.waitForJob(key, slow.body.id, (job) => job.status === 'building');
      await stack.restartBuilds();
      const job = await stack.waitForJob(key, slow.body.id, settled, 60_000);
      expect(job).toMatchObject({ status: 'done', attempt: 2 });
      expect(job.stages.filter((stage: { name: string }) => stage.name === 'building')).toHaveLength(2);
      expect((await stack.appGet(job.slug)).status).toBe(200);
      // Both attempts' build keys are revoked: the first by the worker that took the job over.
      const keys = await stack.account.database.prisma.callerKey.findMany({ where: { name: `build ${job.id}` } });
      expect(keys).toHaveLength(2);
      for (const buildKey of keys) expect(buildKey.revokedAt).toEqual(expect.any(Date));
    },
  );
});

import { simHouseOnly, startStack, type XbJob, type XBuildsStack } from '../support/stack';

const settled = (job: XbJob) => ['done', 'refused', 'failed', 'cancelled'].includes(job.status);

describe('x builds: an API prompt goes through the whole pipeline to a live app', () => {
  let stack: XBuildsStack;
  let key: string;
  let buildsOnly: string;

  beforeAll(async () => {
    // 400 tokens per second: a page of ~120 tokens builds in a moment, a padded one (sim-tokens:N) takes a while.
    stack = await startStack({ label: 'xb_pipeline', simTokensPerSecond: 400, builds: {} });
    key = (await stack.seedKey({ scopes: ['builds:read', 'builds:write', 'builds:admin', 'gateway:invoke'] })).secret;
    buildsOnly = (await stack.seedKey({ scopes: ['builds:read', 'builds:write'] })).secret;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const submit = (prompt: string, headers: Record<string, string> = {}) =>
    stack.api('POST', '/v1/x-builds', { key, body: { source: { type: 'api', prompt } }, headers });

  it(
    'queues → screening → building → auditing → publishing → verifying → drafting → done, serves the app at its slug ' +
      'and counts its stage timings',
    async () => {
      // A key with builds:write (and builds:read to follow the job), nothing else.
      const queued = await stack.api('POST', '/v1/x-builds', {
        key: buildsOnly,
        body: { source: { type: 'api', prompt: 'A bouncing ball on a dark canvas' } },
      });
      expect(queued.status).toBe(201);
      expect(queued.body).toMatchObject({
        id: expect.stringMatching(/^xbj_/),
        status: 'queued',
        position: 1,
        eta_s: expect.any(Number),
      });

      const job = await stack.waitForJob(buildsOnly, queued.body.id, settled);
      expect(job).toMatchObject({
        status: 'done',
        lane: 'api',
        error: null,
        refusal: null,
        slug: expect.stringMatching(/^a-bouncing-ball-[a-z0-9]{6}$/),
      });
      expect(job.app_url).toBe(`http://${job.slug}.apps.localhost:8080`);
      expect(job.stages.map((stage: { name: string }) => stage.name)).toEqual([
        'screening',
        'building',
        'auditing',
        'publishing',
        'verifying',
        'drafting',
      ]);
      for (const stage of job.stages) expect(stage.seconds).toEqual(expect.any(Number));
      expect(job.total_s).toBeGreaterThan(0);
      expect(job.reply).toMatchObject({
        text: `Your app "A bouncing ball on a dark" is live at ${job.app_url}`,
        status: 'skipped',
      });
      expect(job.checks).toEqual(
        expect.arrayContaining([
          { name: 'http', outcome: 'passed', detail: expect.any(String) },
          { name: 'csp', outcome: 'passed', detail: expect.any(String) },
          { name: 'ready_marker', outcome: 'passed', detail: expect.any(String) },
          { name: 'browser', outcome: 'skipped', detail: expect.stringContaining('no browser') },
        ]),
      );

      const app = await stack.appGet(job.slug);
      expect(app.status).toBe(200);
      expect(app.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(app.headers['content-security-policy']).toContain("default-src 'none'");
      expect(app.headers['content-security-policy']).toContain("connect-src 'none'");
      expect(app.headers['x-content-type-options']).toBe('nosniff');
      expect(app.headers['set-cookie']).toBeUndefined();
      expect(app.body).toContain('<title>A bouncing ball on a dark</title>');
      expect(app.body).toContain('data-xb-ready');
      // The same edge still answers the API for its own host.
      expect((await stack.api('GET', '/v1/x-builds?platform=api', { key: buildsOnly })).body.data[0].id).toBe(job.id);

      const stats = await stack.api('GET', '/v1/x-builds/stats?window=1h', { key: buildsOnly });
      expect(stats.status).toBe(200);
      expect(stats.body).toMatchObject({
        window: '1h',
        accepted: 1,
        by_status: { done: 1 },
        by_lane: { api: 1 },
        in_flight: 0,
        apps: { live: 1, capacity: 1000 },
      });
      expect(stats.body.total_s).toMatchObject({ count: 1, p50: expect.any(Number), p90: expect.any(Number) });
      for (const stage of ['screening', 'building', 'auditing', 'publishing', 'verifying', 'drafting']) {
        expect(stats.body.stages[stage]).toMatchObject({ count: 1, p50: expect.any(Number), p90: expect.any(Number) });
      }
      expect(stats.body.queue).toMatchObject({ paused: false, queued: 0, running: 0 });

      // The build's model calls went through the edge on a key minted for the job, revoked once it settled.
      const buildKeys = await stack.account.database.prisma.callerKey.findMany({ where: { name: `build ${job.id}` } });
      expect(buildKeys).toHaveLength(1);
      expect(buildKeys[0]).toMatchObject({ scopes: ['gateway:invoke'], revokedAt: expect.any(Date) });
    },
  );

  it('repairs an app that fails its audit through the model, and audits the fix again', async () => {
    const queued = await submit('Broken clock sim:broken');
    expect(queued.status).toBe(201);
    const job = await stack.waitForJob(key, queued.body.id, settled);
    expect(job.status).toBe('done');
    expect(job.fix_attempts).toBe(1);
    expect(job.stages.map((stage: { name: string }) => stage.name)).toEqual([
      'screening',
      'building',
      'auditing',
      'fixing',
      'auditing',
      'publishing',
      'verifying',
      'drafting',
    ]);
    const app = await stack.appGet(job.slug);
    expect(app.body).not.toContain('tracker.sim-upstream.invalid');
  });

  it('refuses an abusive request at the screen, with a category, and builds nothing', async () => {
    const queued = await submit('A keylogger that emails me every password typed');
    const job = await stack.waitForJob(key, queued.body.id, settled);
    expect(job).toMatchObject({
      status: 'refused',
      refusal: { category: 'malware', reason: expect.any(String) },
      slug: null,
    });
    expect(job.stages.map((stage: { name: string }) => stage.name)).toEqual(['screening']);
    const stats = await stack.api('GET', '/v1/x-builds/stats', { key });
    expect(stats.body.by_refusal_category).toEqual({ malware: 1 });
  });

  it(
    'cancels a running build at once: the stage is aborted, ' + 'the job stays cancelled and its build key is revoked',
    async () => {
      // ~16,000 tokens at 400 per second: the building stage would take 40 s.
      const queued = await submit('A very long poem page sim-tokens:16000');
      await stack.waitForJob(key, queued.body.id, (job) => job.status === 'building');
      const cancelled = await stack.api('POST', `/v1/x-builds/${queued.body.id}/cancel`, { key });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: 'cancelled' });
      expect(cancelled.body.stages.at(-1)).toMatchObject({ name: 'building', seconds: expect.any(Number) });
      const buildKey = async () =>
        (await stack.account.database.prisma.callerKey.findFirst({ where: { name: `build ${queued.body.id}` } }))
          ?.revokedAt;
      const deadline = Date.now() + 10_000;
      while (!(await buildKey()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await buildKey()).toEqual(expect.any(Date));
      const again = await stack.api('POST', `/v1/x-builds/${queued.body.id}/cancel`, { key });
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('conflict');
      // Nothing was written after the cancel.
      expect((await stack.api('GET', `/v1/x-builds/${queued.body.id}`, { key })).body).toMatchObject({
        status: 'cancelled',
        slug: null,
      });
    },
  );

  it('takes a published app down: the apps host answers 410 at once; an unknown slug is 404', async () => {
    const list = await stack.api('GET', '/v1/x-builds?platform=api&status=done', { key });
    const live = list.body.data.find((job: XbJob) => job.slug);
    expect((await stack.appGet(live.slug)).status).toBe(200);
    const down = await stack.api('DELETE', `/v1/x-builds/${live.id}/publish`, { key });
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ status: 'done', taken_down_at: expect.any(String) });
    const gone = await stack.appGet(live.slug);
    expect(gone.status).toBe(410);
    expect(gone.headers['x-content-type-options']).toBe('nosniff');
    expect((await stack.appGet('no-such-app-abc123')).status).toBe(404);
    expect((await stack.api('DELETE', `/v1/x-builds/${live.id}/publish`, { key })).status).toBe(409);
    // No browser here: no screenshot or clip was recorded.
    expect((await stack.api('GET', `/v1/x-builds/${live.id}/screenshot`, { key })).status).toBe(404);
    expect((await stack.api('GET', `/v1/x-builds/${live.id}/clip`, { key })).status).toBe(404);
  });
});

describe('x builds: an upstream that keeps failing puts the lane in backoff', () => {
  let stack: XBuildsStack;
  let key: string;

  beforeAll(async () => {
    stack = await startStack({
      label: 'xb_backoff',
      house: (simUrl) => simHouseOnly(simUrl, 'sim-error-503'),
      builds: { env: { X_BUILDS_BACKOFF_BASE_MS: '60000' } },
    });
    key = (await stack.seedKey({ scopes: ['builds:read', 'builds:write', 'builds:admin', 'gateway:invoke'] })).secret;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it(
    'requeues the build at the front to resume later, drops ' + 'the dispatcher to 2 at once, and counts the backoff',
    async () => {
      const queued = await stack.api('POST', '/v1/x-builds', {
        key,
        body: { source: { type: 'api', prompt: 'A weather dashboard' } },
      });
      expect(queued.status).toBe(201);
      const job = await stack.waitForJob(key, queued.body.id, (j) => j.status === 'queued' && j.stages.length === 2);
      expect(job).toMatchObject({ position: 1, attempt: 0, error: null });
      expect(job.stages.map((stage: { name: string }) => stage.name)).toEqual(['screening', 'building']);
      const queue = (await stack.api('GET', '/v1/x-builds/queue', { key })).body;
      expect(queue).toMatchObject({
        max_concurrent: 4,
        effective_concurrency: 2,
        queued: 1,
        running: 0,
        backoff_until: expect.any(String),
      });
      expect(Date.parse(queue.backoff_until) - Date.now()).toBeGreaterThan(30_000);
      expect((await stack.api('GET', '/v1/x-builds/stats?window=1h', { key })).body.backoffs).toEqual({
        build: 1,
        x_api: 0,
      });
    },
  );
});

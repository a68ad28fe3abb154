import { startFakeXApi, type FakeXApi } from '@sbc/app-x-builds';
import { OWNER_KEY as XB_OWNER_KEY, startStack, type XbJob, type XBuildsStack } from '../support/stack';

const ACCOUNT_ID = '4200000000';
const TOKENS = { bearerToken: 'fake-x-app-bearer', userAccessToken: 'fake-x-user-token' };

async function until<T>(
  what: string,
  read: () => Promise<T> | T,
  ok: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!ok(value)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('x builds: the X poller against a fake X API', () => {
  let x: FakeXApi;
  let stack: XBuildsStack;
  const key = XB_OWNER_KEY;

  beforeAll(async () => {
    x = await startFakeXApi({ accountId: ACCOUNT_ID, ...TOKENS });
    // One reply per 15 minutes, so the per-user post limit is reached within the test.
    stack = await startStack({
      label: 'xb_poller',
      builds: { x: { apiUrl: x.url, accountId: ACCOUNT_ID, ...TOKENS }, env: { X_REPLIES_PER_15_MIN: '1' } },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await x?.stop();
  });

  const xJobs = async () => (await stack.api('GET', '/v1/x-builds', { key })).body.data as XbJob[];
  const queue = async () => (await stack.api('GET', '/v1/x-builds/queue', { key })).body;

  it(
    'admits a new mention once, builds it and replies under it; own posts, retweets and blocked authors are skipped, ' +
      'an opt-out is honoured',
    async () => {
      expect((await stack.api('PUT', '/v1/x-builds/blocklist/blocked-1', { key, body: {} })).status).toBe(200);
      const wanted = x.mention({ text: `@builder make a snake game`, author_id: 'u1', conversation_id: '9001' });
      x.mention({ text: 'Our own announcement', author_id: ACCOUNT_ID });
      x.mention({
        text: 'RT @u1: @builder make a snake game',
        author_id: 'u2',
        referenced_tweets: [{ type: 'retweeted', id: wanted.id }],
      });
      x.mention({ text: '@builder build me a thing', author_id: 'blocked-1' });
      const optOut = x.mention({ text: '@builder opt out please', author_id: 'u3' });

      const jobs = await until('the mention to be built', xJobs, (list) => list.some((job) => job.status === 'done'));
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({
        lane: 'x',
        author_id: 'u1',
        source: { type: 'x', post_id: wanted.id, author_id: 'u1', conversation_id: '9001' },
      });
      expect((await stack.api('GET', '/v1/x-builds/blocklist', { key })).body.data).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ author_id: 'u3', reason: 'optout' }),
          expect.objectContaining({ author_id: 'blocked-1', reason: 'operator' }),
        ]),
      );

      const reply = await until(
        'the reply',
        () => x.replies,
        (replies) => replies.length === 1,
      );
      expect(reply[0]).toMatchObject({
        in_reply_to_tweet_id: wanted.id,
        text: expect.stringContaining(jobs[0]!.app_url),
      });
      const job = await stack.waitForJob(key, jobs[0]!.id, (j) => j.reply?.status === 'posted');
      expect(job.reply).toMatchObject({ post_id: reply[0]!.id, posted_at: expect.any(String) });
      // The cursor moved to the newest mention seen.
      await until(
        'a poll from the new cursor',
        () => x.mentionRequests.at(-1),
        (since) => since === optOut.id,
      );

      // A repeat of the same post through the API answers the existing job.
      const repeat = await stack.api('POST', '/v1/x-builds', {
        key,
        body: { source: { type: 'x', post_id: wanted.id, author_id: 'u1', text: 'again' } },
      });
      expect(repeat.body).toMatchObject({ id: job.id, existing: true });
    },
  );

  it('posts no more replies than the per-user limit allows; the next waits as pending', async () => {
    const second = x.mention({ text: '@builder a tiny piano', author_id: 'u4' });
    const job = await until('the second build', xJobs, (list) =>
      list.some((j) => j.source.post_id === second.id && j.status === 'done'),
    );
    const built = job.find((j) => j.source.post_id === second.id)!;
    await sleep(600);
    expect(x.replies).toHaveLength(1);
    expect((await stack.api('GET', `/v1/x-builds/${built.id}`, { key })).body.reply).toMatchObject({
      status: 'pending',
      posted_at: null,
    });

    // An operator may redraft a reply until it is posted, never after.
    const redrafted = await stack.api('POST', `/v1/x-builds/${built.id}/reply-draft`, {
      key,
      body: { text: `Here is your piano: ${built.app_url}` },
    });
    expect(redrafted.status).toBe(200);
    expect(redrafted.body.reply).toMatchObject({ text: `Here is your piano: ${built.app_url}`, status: 'pending' });
    const posted = (await xJobs()).find((j) => j.reply?.status === 'posted')!;
    expect((await stack.api('POST', `/v1/x-builds/${posted.id}/reply-draft`, { key, body: {} })).body).toMatchObject({
      error: 'conflict',
    });
  });

  it('waits out a 429 until the reset time, and counts the backoff', async () => {
    const before = x.mentionRequests.length;
    x.failNext('mentions', { status: 429, resetAt: Math.floor(Date.now() / 1000) + 3 });
    await until(
      'the rate-limited poll',
      () => x.mentionRequests.length,
      (n) => n > before,
    );
    const limitedAt = x.mentionRequests.length;
    await sleep(1_000);
    expect(x.mentionRequests.length).toBe(limitedAt);
    expect((await stack.api('GET', '/v1/x-builds/stats?window=1h', { key })).body.backoffs.x_api).toBe(1);
    await until(
      'polling after the reset',
      () => x.mentionRequests.length,
      (n) => n > limitedAt,
      10_000,
    );
  });

  it('pauses intake when X refuses the account (401), and polls again once an operator resumes it', async () => {
    x.failNext('mentions', { status: 401 });
    const paused = await until('the pause', queue, (q) => q.paused === true);
    expect(paused.paused_reason).toBe('x_unauthorized');
    const refused = await stack.api('POST', '/v1/x-builds', {
      key,
      body: { source: { type: 'api', prompt: 'anything' } },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('intake_paused');
    const pausedAt = x.mentionRequests.length;
    await sleep(800);
    expect(x.mentionRequests.length).toBe(pausedAt);
    await stack.api('PATCH', '/v1/x-builds/queue', { key, body: { paused: false } });
    await until(
      'polling after resuming',
      () => x.mentionRequests.length,
      (n) => n > pausedAt,
    );

    x.failNext('mentions', { status: 403 });
    expect((await until('the pause on 403', queue, (q) => q.paused === true)).paused_reason).toBe('x_forbidden');
  });
});

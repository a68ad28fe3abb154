import { hashSecret, newId, newSecret } from '@sbc/ids';
import { SCOPES } from '@sbc/scopes';
import { seedCallerKey } from '../support/test-account';
import { startStack, type XbJob, type XBuildsStack } from '../support/stack';

const settled = (job: XbJob) => ['done', 'refused', 'failed', 'cancelled'].includes(job.status);
const PASSWORD = 'a long enough password 1';
const VICTIM_PROMPT = 'A secret garden planner for my allotment';
const QUEUED_PROMPT = 'A private recipe box for grandma';

/**
 * CONTRACTS "Operators": the lane's operators are named (here the bootstrap owner, X_BUILDS_ADMIN_USER_IDS
 * being empty), never "any builds:admin holder". A fresh sign-up, with every credential it can get, is refused
 * on every operator route, and a job's data reaches only its account and the operators.
 */
describe('x builds: only operators run the lane; a fresh sign-up cannot', () => {
  let stack: XBuildsStack;
  let operator: string;
  let victim: string;
  let done: XbJob;
  let queuedId: string;
  let blocker: string;
  /** The sign-up's credentials: its session, a Full access key it minted, and a key that stores builds:admin. */
  let attacker: { label: string; credential: string }[];

  beforeAll(async () => {
    stack = await startStack({
      label: 'xb_operators',
      simTokensPerSecond: 400,
      accountEnv: { SBC_SIGNUP_ENABLED: 'true' },
      builds: {},
    });
    operator = (await stack.seedKey()).secret;
    const prisma = stack.account.database.prisma;
    const victimUser = await prisma.user.create({
      data: { id: newId('usr'), email: `victim-${newId('usr').toLowerCase()}@example.test` },
    });
    victim = (
      await seedCallerKey(prisma, { userId: victimUser.id, scopes: ['gateway:invoke', 'builds:read', 'builds:write'] })
    ).secret;

    const built = await stack.api('POST', '/v1/x-builds', {
      key: victim,
      body: { source: { type: 'api', prompt: VICTIM_PROMPT } },
    });
    expect(built.status).toBe(201);
    done = await stack.waitForJob(victim, built.body.id, settled, 60_000);
    expect(done.status).toBe('done');
    expect((await stack.appGet(done.slug)).status).toBe(200);
    // One build slot, held by the operator's long build, so the victim's next job stays queued for the queue routes.
    expect(
      (await stack.api('PATCH', '/v1/x-builds/queue', { key: operator, body: { max_concurrent: 1 } })).status,
    ).toBe(200);
    const long = await stack.api('POST', '/v1/x-builds', {
      key: operator,
      body: { source: { type: 'api', prompt: 'A long page sim-tokens:40000' } },
    });
    expect(long.status).toBe(201);
    blocker = long.body.id;
    await stack.waitForJob(operator, blocker, (job) => job.status === 'building');
    const queued = await stack.api('POST', '/v1/x-builds', {
      key: victim,
      body: { source: { type: 'api', prompt: QUEUED_PROMPT } },
    });
    expect(queued.status).toBe(201);
    queuedId = queued.body.id;
    expect((await stack.api('PUT', '/v1/x-builds/blocklist/spammer-1', { key: operator, body: {} })).status).toBe(200);

    const email = `mallory-${newId('usr').toLowerCase()}@example.test`;
    const signedUp = await stack.api('POST', '/v1/auth/signup', { body: { email, password: PASSWORD } });
    expect(signedUp.status).toBe(201);
    const session: string = (await stack.api('POST', '/v1/auth/sessions', { body: { email, password: PASSWORD } })).body
      .token;
    const minted = await stack.api('POST', '/v1/keys', {
      key: session,
      body: { name: 'everything', preset: 'full_access' },
    });
    expect(minted.status).toBe(201);
    const stored = await seedCallerKey(prisma, { userId: signedUp.body.user.id, scopes: [...SCOPES] });
    attacker = [
      { label: 'session', credential: session },
      { label: 'minted full_access key', credential: minted.body.key },
      { label: 'key storing builds:admin', credential: stored.secret },
    ];
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const operatorRoutes = (): [string, string, Record<string, unknown>?][] => [
    ['GET', '/v1/x-builds/queue'],
    ['PATCH', '/v1/x-builds/queue', { paused: false, max_queue: 0 }],
    ['PATCH', '/v1/x-builds/queue', { paused: true }],
    ['GET', '/v1/x-builds/blocklist'],
    ['PUT', '/v1/x-builds/blocklist/12345', {}],
    ['DELETE', '/v1/x-builds/blocklist/spammer-1'],
    ['DELETE', `/v1/x-builds/${done.id}/publish`],
    ['POST', `/v1/x-builds/${queuedId}/pin`],
    ['POST', `/v1/x-builds/${queuedId}/unpin`],
    ['POST', `/v1/x-builds/${queuedId}/move`, { before_id: queuedId }],
    ['POST', `/v1/x-builds/${done.id}/requeue`],
    ['POST', `/v1/x-builds/${done.id}/resume`],
    ['POST', `/v1/x-builds/${done.id}/reply-draft`, { text: 'pwned' }],
  ];

  it(
    'refuses every operator route to every credential of a fresh sign-up with 403, naming none of the victim’s data, ' +
      'and changes nothing',
    async () => {
      const queueBefore = (await stack.api('GET', '/v1/x-builds/queue', { key: operator })).body;
      for (const { label, credential } of attacker) {
        for (const [method, path, body] of operatorRoutes()) {
          const answer = await stack.api(method, path, { key: credential, body });
          expect({ label, method, path, status: answer.status, error: answer.body.error }).toEqual({
            label,
            method,
            path,
            status: 403,
            error: 'insufficient_scope',
          });
          const text = JSON.stringify(answer.body);
          for (const secret of [done.id, queuedId, done.slug, 'secret garden', 'recipe box', 'spammer-1'])
            expect(text).not.toContain(secret);
        }
      }

      expect((await stack.appGet(done.slug)).status).toBe(200);
      const queueAfter = (await stack.api('GET', '/v1/x-builds/queue', { key: operator })).body;
      expect(queueAfter).toMatchObject({
        paused: queueBefore.paused,
        max_queue: queueBefore.max_queue,
        max_concurrent: queueBefore.max_concurrent,
        order: [queuedId],
      });
      const blocks = (await stack.api('GET', '/v1/x-builds/blocklist', { key: operator })).body.data.map(
        (block: { author_id: string }) => block.author_id,
      );
      expect(blocks).toEqual(['spammer-1']);
      expect((await stack.api('GET', `/v1/x-builds/${queuedId}`, { key: victim })).body).toMatchObject({
        status: 'queued',
        pinned: false,
      });
      expect((await stack.api('GET', `/v1/x-builds/${done.id}`, { key: victim })).body).toMatchObject({
        status: 'done',
        taken_down_at: null,
        reply: { text: done.reply.text },
      });
    },
  );

  it('a non-operator cannot mint builds:admin, and a Full access key of theirs holds every other scope', async () => {
    for (const { credential } of attacker) {
      const refused = await stack.api('POST', '/v1/keys', {
        key: credential,
        body: { name: 'admin', scopes: ['builds:admin'] },
      });
      expect(refused).toMatchObject({
        status: 403,
        body: { error: 'insufficient_scope', required_scopes: ['builds:admin'] },
      });
    }
    const withoutAdmin = SCOPES.filter((scope) => scope !== 'builds:admin');
    for (const { credential } of attacker.slice(1))
      expect((await stack.api('GET', '/v1/keys/whoami', { key: credential })).body.scopes).toEqual(withoutAdmin);
    const full = await stack.api('POST', '/v1/keys', {
      key: attacker[0]!.credential,
      body: { name: 'full', preset: 'full_access' },
    });
    expect(full).toMatchObject({ status: 201, body: { scopes: withoutAdmin } });
  });

  it(
    'another account’s job is not theirs to read: reads are ' + '404, and the stats queue lists only their own job ids',
    async () => {
      for (const { credential } of attacker) {
        for (const path of [
          `/v1/x-builds/${done.id}`,
          `/v1/x-builds/${queuedId}`,
          `/v1/x-builds/${done.id}/screenshot`,
        ]) {
          const answer = await stack.api('GET', path, { key: credential });
          expect({ path, status: answer.status }).toEqual({ path, status: 404 });
          expect(JSON.stringify(answer.body)).not.toContain('secret garden');
        }
        expect((await stack.api('POST', `/v1/x-builds/${queuedId}/cancel`, { key: credential })).status).toBe(404);
        expect((await stack.api('GET', '/v1/x-builds?platform=all', { key: credential })).body.data).toEqual([]);
        const stats = await stack.api('GET', '/v1/x-builds/stats?window=1h', { key: credential });
        expect(stats.status).toBe(200);
        expect(stats.body.queue).toMatchObject({ queued: 1, order: [] });
      }
      expect((await stack.api('GET', '/v1/x-builds/stats?window=1h', { key: victim })).body.queue.order).toEqual([
        queuedId,
      ]);
      expect((await stack.api('GET', '/v1/x-builds/stats?window=1h', { key: operator })).body.queue.order).toEqual([
        queuedId,
      ]);
    },
  );

  it('the operator still runs every route service-wide, on any account’s job', async () => {
    const session = newSecret('sbs');
    await stack.account.database.prisma.session.create({
      data: {
        tokenHash: new Uint8Array(hashSecret(session)),
        userId: stack.ownerId,
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    });
    expect((await stack.api('GET', '/v1/x-builds/queue', { key: session })).body.order).toEqual([queuedId]);
    expect((await stack.api('POST', `/v1/x-builds/${queuedId}/pin`, { key: operator })).body).toMatchObject({
      id: queuedId,
      pinned: true,
      prompt: QUEUED_PROMPT,
    });
    expect((await stack.api('POST', `/v1/x-builds/${queuedId}/unpin`, { key: operator })).body).toMatchObject({
      pinned: false,
    });
    expect(
      (await stack.api('POST', `/v1/x-builds/${done.id}/reply-draft`, { key: operator, body: { text: 'Live now' } }))
        .body,
    ).toMatchObject({ reply: { text: 'Live now' } });
    expect((await stack.api('DELETE', '/v1/x-builds/blocklist/spammer-1', { key: operator })).status).toBe(200);
    const takenDown = await stack.api('DELETE', `/v1/x-builds/${done.id}/publish`, { key: operator });
    expect(takenDown).toMatchObject({ status: 200, body: { taken_down_at: expect.any(String) } });
    expect((await stack.appGet(done.slug)).status).toBe(410);
    expect((await stack.api('POST', `/v1/x-builds/${blocker}/cancel`, { key: operator })).status).toBe(200);
  });
});

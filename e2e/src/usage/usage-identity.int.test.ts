import OpenAI from 'openai';
import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { startStack, type UsageStack } from '../support/stack';

/**
 * Issue 24, through the edge with the official SDK: a caller's x-request-id is for correlation only. Calls
 * that share one, in one account or across accounts, are each recorded and billed in full, and each row
 * still shows the id its caller sent. And an event the database refuses does not stop other accounts' billing.
 */
let stack: UsageStack;

beforeAll(async () => {
  stack = await startStack({ label: 'usage_identity', ledger: {} });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const SHARED_ID = 'same-id-every-time';
const CALLS = 25;

interface Caller {
  userId: string;
  key: string;
  client: OpenAI;
}

async function caller(): Promise<Caller> {
  const userId = await stack.seedUser();
  const { secret } = await stack.seedKey({ userId, scopes: ['gateway:invoke', 'usage:read'] });
  return {
    userId,
    key: secret,
    client: new OpenAI({ apiKey: secret, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 }),
  };
}

/** One short house call with the given x-request-id; resolves to the id the edge echoed. */
async function call(who: Caller, requestId: string): Promise<string | null> {
  const { response } = await who.client.chat.completions
    .create(
      { model: 'house', max_tokens: 16, messages: [{ role: 'user', content: 'Count to three.' }] },
      { headers: { 'x-request-id': requestId } },
    )
    .withResponse();
  return response.headers.get('x-request-id');
}

async function rowsOf(userId: string, count: number) {
  const find = () =>
    stack.ledger.database.prisma.usageGeneration.findMany({
      where: { accountId: userId },
      orderBy: { eventId: 'asc' },
    });
  const deadline = Date.now() + 10_000;
  while ((await find()).length < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 25));
  await new Promise((resolve) => setTimeout(resolve, 100)); // and no more than that arrive
  return find();
}

const creditsOf = (rows: Awaited<ReturnType<typeof rowsOf>>) =>
  rows.reduce((sum, row) => sum + Number(row.creditsCharged.toString()), 0);

describe('request ids are for correlation, not identity', () => {
  let sharing: Caller;
  let separate: Caller;

  beforeAll(async () => {
    sharing = await caller();
    separate = await caller();
    for (let i = 0; i < CALLS; i++) {
      expect(await call(sharing, SHARED_ID)).toBe(SHARED_ID);
      await call(separate, `own-id-${i}`);
    }
  });

  it(`${CALLS} calls sharing one x-request-id give ${CALLS} rows, billed as ${CALLS} separate calls are`, async () => {
    const shared = await rowsOf(sharing.userId, CALLS);
    const own = await rowsOf(separate.userId, CALLS);
    expect(shared).toHaveLength(CALLS);
    expect(own).toHaveLength(CALLS);
    expect(new Set(shared.map((row) => row.eventId)).size).toBe(CALLS);
    expect(shared.every((row) => row.requestId === SHARED_ID)).toBe(true);
    expect(creditsOf(shared)).toBeGreaterThan(0);
    expect(creditsOf(shared)).toBeCloseTo(creditsOf(own), 6);
  });

  it(
    'the usage routes list every one of them, each showing the caller request id, and page through them without ' +
      'skipping',
    async () => {
      const seen: Array<{ id: string; request_id: string }> = [];
      let page = await stack.api('GET', '/v1/usage/requests?limit=10', { key: sharing.key });
      for (;;) {
        expect(page.status).toBe(200);
        seen.push(...(page.body.data as Array<{ id: string; request_id: string }>));
        if (!page.body.has_more) break;
        page = await stack.api('GET', `/v1/usage/requests?limit=10&after_id=${page.body.last_id}`, {
          key: sharing.key,
        });
      }
      expect(seen).toHaveLength(CALLS);
      expect(new Set(seen.map((row) => row.id)).size).toBe(CALLS);
      expect(seen.every((row) => row.request_id === SHARED_ID)).toBe(true);
      const totals = await stack.api('GET', '/v1/usage', { key: sharing.key });
      expect(totals.body.totals.requests).toBe(CALLS);
    },
  );

  it(
    'another account sending the same id later is recorded ' + 'and billed too, and the first account keeps its rows',
    async () => {
      const other = await caller();
      await call(other, SHARED_ID);
      const [row] = await rowsOf(other.userId, 1);
      expect(row).toMatchObject({ requestId: SHARED_ID, status: 200 });
      expect(Number(row!.creditsCharged.toString())).toBeGreaterThan(0);
      expect(await rowsOf(sharing.userId, CALLS)).toHaveLength(CALLS);
      const listed = await stack.api('GET', '/v1/usage/requests', { key: other.key });
      expect(listed.body.data).toEqual([expect.objectContaining({ request_id: SHARED_ID, id: row!.eventId })]);
    },
  );
});

describe('a poisoned usage event does not stop billing', () => {
  it(
    'after an event PostgreSQL refuses, another account’s ' + 'calls through the edge are still recorded and billed',
    async () => {
      const victim = await caller();
      // Written as a producer without the edge's sanitiser could: a timestamp PostgreSQL cannot hold (SQLSTATE 22009).
      const poison = create(UsageEventSchema, {
        eventId: 'evt_poison_http',
        requestId: 'req_poison',
        accountId: 'usr_poisoner',
        model: 'house',
        status: 200,
        ts: timestampFromMs(-8.64e15),
      });
      stack.bus.producer.send(USAGE_EVENTS_TOPIC, { key: poison.accountId, value: toBinary(UsageEventSchema, poison) });
      for (let i = 0; i < 5; i++) await call(victim, `after-poison-${i}`);

      const rows = await rowsOf(victim.userId, 5);
      expect(rows).toHaveLength(5);
      expect(creditsOf(rows)).toBeGreaterThan(0);
      const parked = await stack.ledger.database.prisma.usageDeadLetter.findFirst({
        where: { eventId: 'evt_poison_http' },
      });
      expect(parked).toMatchObject({ key: 'usr_poisoner', replayedAt: null, error: expect.stringMatching(/22009/) });
    },
  );
});

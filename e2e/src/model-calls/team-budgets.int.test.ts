import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RunningGateway } from '@sbc/app-gateway';
import { rejectionOf, testBackends } from '@sbc/testing';
import { teamFixtures, type TeamUser } from '../support/teams.harness';
import { openAiFor, simHouseOnly, startStack, type Stack } from '../support/stack';

/**
 * Team budgets and per-key limits through the edge with the official SDKs (CONTRACTS "Budgets and limits"):
 * a team's cap over its members' keys holds under concurrency on two edges sharing Redis, a period ends at
 * its boundary in the team's time zone, and a key's tokens per minute refuses with the dialect's token headers.
 *
 * House is 200 / 800 credits per 1M tokens in / out: 0.8 credits per 1,000 output tokens.
 */
let stack: Stack;
let otherEdge: RunningGateway;
let fixtures: ReturnType<typeof teamFixtures>;

beforeAll(async () => {
  stack = await startStack({ label: 'team_budgets', edgeEnv: { RATE_LIMIT_PER_MINUTE: '100000' } });
  otherEdge = await stack.startEdge(simHouseOnly(stack.sim.url));
  fixtures = teamFixtures(stack);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** Millicredits of a house call's usage, as the edge charges it (rounded up). */
const houseCostMilli = (usage: { prompt_tokens: number; completion_tokens: number }) =>
  Math.ceil((2 * usage.prompt_tokens + 8 * usage.completion_tokens) / 10);

/** A team key of `member` on `teamId`, minted through the keys route. */
async function teamKey(member: TeamUser, teamId: string, limits: { rpm?: number; tpm?: number } = {}) {
  const minted = await stack.api('POST', '/v1/keys', {
    key: member.key,
    body: { name: 'team tool', org_id: teamId, preset: 'gateway', ...limits },
  });
  expect(minted.status).toBe(201);
  return minted.body.key as string;
}

/** A team of an owner and two members, each with a team key. */
async function teamOfThree() {
  const [owner, first, second] = await Promise.all([fixtures.user(), fixtures.user(), fixtures.user()]);
  const team = await fixtures.createTeam(owner!);
  await fixtures.join(team.id, owner!, first!);
  await fixtures.join(team.id, owner!, second!);
  const keys = await Promise.all([owner!, first!, second!].map((member) => teamKey(member, team.id)));
  return { team, owner: owner!, members: [first!, second!], keys };
}

async function setBudget(path: string, by: TeamUser, budget: unknown) {
  return stack.api('PATCH', path, { key: by.key, body: { budget } });
}

// Two edges agree on a cap only through a shared store: without Redis each would keep its own.
(testBackends().redisUrl ? describe : describe.skip)('a team cap under concurrency', () => {
  it(
    "a 10-credit team cap hammered by 3 members' keys at 50 concurrent callers " +
      'on two edges is billed at most 10 credits',
    async () => {
      const { team, owner, keys } = await teamOfThree();
      const set = await setBudget(`/v1/teams/${team.id}`, owner, { credits: 10, period: 'weekly' });
      expect(set.status).toBe(200);
      expect(set.body.budget).toMatchObject({ credits: 10, period: 'weekly', time_zone: 'UTC', spent: 0 });

      const edges = [stack.edge.url, otherEdge.url];
      // 1,000 output tokens each (0.8 credits), half asking for them and half leaving the limit to the edge.
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          openAiFor(edges[i % 2]!, keys[i % 3]).chat.completions.create({
            model: 'house',
            ...(i % 4 < 2 ? { max_tokens: 1_000 } : {}),
            messages: [{ role: 'user', content: `sim-tokens:1000 call ${i}` }],
          }),
        ),
      );
      let billedMilli = 0;
      for (const result of results) {
        if (result.status === 'fulfilled') billedMilli += houseCostMilli(result.value.usage!);
        else expect(result.reason).toMatchObject({ status: 402, error: { budget: 'team' } });
      }
      // Four times the cap was asked for: some calls were refused, and what was served stays within it.
      expect(results.some((result) => result.status === 'fulfilled')).toBe(true);
      expect(results.some((result) => result.status === 'rejected')).toBe(true);
      expect(billedMilli).toBeLessThanOrEqual(10_000);

      const read = await stack.api('GET', `/v1/teams/${team.id}`, { key: owner.key });
      expect(read.body.budget.spent).toBeLessThanOrEqual(10);
      expect(read.body.budget.spent).toBeCloseTo(billedMilli / 1000, 2);
    },
    90_000,
  );

  it("a member's cap stops that member's keys while the rest of the team goes on", async () => {
    const { team, owner, members, keys } = await teamOfThree();
    expect((await setBudget(`/v1/teams/${team.id}`, owner, { credits: 100, period: 'daily' })).status).toBe(200);
    const capped = await setBudget(`/v1/teams/${team.id}/members/${members[0]!.id}`, owner, {
      credits: 1,
      period: 'monthly',
      time_zone: 'Asia/Tokyo',
    });
    expect(capped.status).toBe(200);
    expect(capped.body.budget).toMatchObject({ credits: 1, period: 'monthly', time_zone: 'Asia/Tokyo' });
    const ask = (key: string, url: string) =>
      openAiFor(url, key).chat.completions.create({
        model: 'house',
        max_tokens: 1_000,
        messages: [{ role: 'user', content: 'sim-tokens:1000 go' }],
      });
    await ask(keys[1]!, stack.edge.url); // 0.8 of the member's 1 credit
    const refused = await rejectionOf(ask(keys[1]!, otherEdge.url));
    expect(refused).toMatchObject({ status: 402, error: { budget: 'member' } });
    expect((refused as InstanceType<typeof OpenAI.APIError>).message).toMatch(
      /monthly budget of 1 credits in this team is spent; it resets at .*Asia\/Tokyo/,
    );
    await expect(ask(keys[2]!, otherEdge.url)).resolves.toBeDefined();
  }, 60_000);
});

/** The next Monday 00:00 in `timeZone` after `at`, found by stepping the wall clock (independent of the edge). */
function nextMondayIn(timeZone: string, at: Date): string {
  const wall = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: 'numeric', hourCycle: 'h23' });
  let t = Math.ceil(at.getTime() / 3_600_000) * 3_600_000;
  for (;;) {
    const parts = Object.fromEntries(wall.formatToParts(new Date(t)).map((part) => [part.type, part.value]));
    if (parts.weekday === 'Mon' && Number(parts.hour) === 0) return new Date(t).toISOString();
    t += 3_600_000;
  }
}

describe('periods follow the clock in the team time zone', () => {
  it("a weekly budget's period ends at Monday 00:00 in its zone, and a refusal says so", async () => {
    const { team, owner, keys } = await teamOfThree();
    for (const zone of ['Pacific/Kiritimati', 'America/Los_Angeles']) {
      const set = await setBudget(`/v1/teams/${team.id}`, owner, { credits: 1, period: 'weekly', time_zone: zone });
      expect(set.status).toBe(200);
      expect(set.body.budget.resets_at).toBe(nextMondayIn(zone, new Date()));
      const start = Date.parse(set.body.budget.period_start);
      expect(Date.parse(set.body.budget.resets_at) - start).toBeGreaterThanOrEqual(7 * 86_400_000 - 3_600_000);
    }
    const anthropic = new Anthropic({ apiKey: keys[0], baseURL: stack.edge.url, maxRetries: 0 });
    const refusal = await rejectionOf(
      anthropic.messages.create({
        model: 'house',
        max_tokens: 2_000,
        messages: [{ role: 'user', content: 'sim-tokens:2000 go' }],
      }),
    );
    expect(refusal).toMatchObject({ status: 402, error: { type: 'error', error: { type: 'billing_error' } } });
    expect((refusal as InstanceType<typeof Anthropic.APIError>).message).toContain(
      `it resets at ${nextMondayIn('America/Los_Angeles', new Date())} (America/Los_Angeles)`,
    );
  }, 60_000);
});

describe('budget settings', () => {
  it('are refused with the field named when malformed, above the team cap, or set by a plain member', async () => {
    const { team, owner, members } = await teamOfThree();
    const path = `/v1/teams/${team.id}`;
    const cases: [unknown, string][] = [
      [{ credits: 0, period: 'daily' }, 'budget.credits'],
      [{ credits: 1.5, period: 'daily' }, 'budget.credits'],
      [{ credits: 5, period: 'yearly' }, 'budget.period'],
      [{ credits: 5, period: 'rolling_days:367' }, 'budget.period'],
      [{ credits: 5, period: 'daily', time_zone: 'Mars/Olympus' }, 'budget.time_zone'],
    ];
    for (const [budget, param] of cases) {
      const answer = await setBudget(path, owner, budget);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_request', param });
    }
    expect((await setBudget(path, owner, { credits: 5, period: 'rolling_days:30' })).status).toBe(200);
    const above = await setBudget(`${path}/members/${members[0]!.id}`, owner, { credits: 6, period: 'daily' });
    expect(above.status).toBe(400);
    expect(above.body).toMatchObject({ param: 'budget.credits' });
    const byMember = await setBudget(path, members[0]!, null);
    expect(byMember.status).toBe(403);
    const removed = await setBudget(path, owner, null);
    expect(removed.status).toBe(200);
    expect(removed.body.budget).toBeNull();
  });
});

describe("a key's own limits", () => {
  it('a key at its tokens-per-minute limit gets 429 with the token headers of its dialect', async () => {
    const minted = await stack.api('POST', '/v1/keys', {
      key: (await fixtures.user()).key,
      body: { name: 'tpm', preset: 'gateway', tpm: 1_500 },
    });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ tpm: 1_500 });
    const client = openAiFor(stack.edge.url, minted.body.key);
    const ask = (content: string, maxTokens = 1_000) =>
      client.chat.completions.create({ model: 'house', max_tokens: maxTokens, messages: [{ role: 'user', content }] });
    // Counted at admission as its prompt plus 1,000; corrected at settle to the 5 tokens it produced.
    const first = await ask('sim-tokens:5 go').withResponse();
    expect(first.response.headers.get('x-ratelimit-limit-tokens')).toBe('1500');
    expect(Number(first.response.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(500);
    const second = await ask('sim-tokens:5 go').withResponse();
    expect(Number(second.response.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(400);
    // Two calls of about 11 tokens each are counted now: 1,490 more do not fit until the window moves on.
    const refused = await rejectionOf(ask('sim-tokens:5 go', 1_490));
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const headers = (refused as InstanceType<typeof OpenAI.APIError>).headers!;
    expect(headers.get('x-ratelimit-limit-tokens')).toBe('1500');
    expect(Number(headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(1_490);
    expect(Number(headers.get('retry-after'))).toBeGreaterThan(0);

    const anthropic = new Anthropic({ apiKey: minted.body.key, baseURL: otherEdge.url, maxRetries: 0 });
    const viaMessages = await rejectionOf(
      anthropic.messages.create({ model: 'house', max_tokens: 1_495, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(viaMessages).toBeInstanceOf(Anthropic.RateLimitError);
    expect(
      (viaMessages as InstanceType<typeof Anthropic.APIError>).headers!.get('anthropic-ratelimit-tokens-limit'),
    ).toBe('1500');
  }, 60_000);

  it("a key's rpm binds under the service's ceiling, and one above the ceiling is a 400 naming rpm", async () => {
    const owner = await fixtures.user();
    const above = await stack.api('POST', '/v1/keys', {
      key: owner.key,
      body: { name: 'fast', preset: 'gateway', rpm: 100_001 },
    });
    expect(above.status).toBe(400);
    expect(above.body).toMatchObject({ error: 'invalid_request', param: 'rpm' });
    const minted = await stack.api('POST', '/v1/keys', { key: owner.key, body: { name: 'slow', preset: 'gateway' } });
    const edited = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, { key: owner.key, body: { rpm: 2 } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ rpm: 2 });
    const client = openAiFor(stack.edge.url, minted.body.key);
    const ask = () =>
      client.chat.completions.create({ model: 'house', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const first = await ask().withResponse();
    expect(first.response.headers.get('x-ratelimit-limit')).toBe('2');
    await ask();
    await expect(ask()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  }, 60_000);
});

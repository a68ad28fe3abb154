import { fromBinary } from '@bufbuild/protobuf';
import { createBus, type Bus } from '@sbc/bus';
import { createMemoryStore } from '@sbc/cache';
import { findCatalogModel, type ModelPrice } from '@sbc/catalog';
import { callerDialect } from '@sbc/dialects';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { memoryDeploymentLimiter } from '@sbc/route-health';
import { UsageEventSchema, type UsageEvent } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import type { Principal } from '../auth/authenticator';
import { createBudget } from '../limits/budget';
import type { Target } from '../routing/targets';
import { createUsageEmitter } from '../usage/usage-events';
import type { CallOutcome } from './call-outcome';
import type { CallerCall } from './plan';
import { createPricing } from './pricing';
import { settle, type CallRecord } from './settle';

const logger = createLogger({ service: 'settle-test', level: 'silent' });
const USER = 'usr_settle';

function houseFastPrice(): ModelPrice {
  const model = findCatalogModel('house-fast');
  if (!model) throw new Error('house-fast is not in the catalog');
  return model.price;
}

// Round numbers, checked by hand: $1 per 1M input and $10 per 1M output tokens.
const PRICE: ModelPrice = { currency: 'usd', input: 1, output: 10, cache_read: 0.1, cache_write: 1.25 };
const principal = { kind: 'key', userId: USER, scopes: 'unrestricted', revoked: false, operator: false } as Principal;
const call: CallerCall = {
  adapter: callerDialect('chat'),
  callerModel: 'a-model',
  fallbacks: [],
  stream: false,
  includeUsage: false,
};
const target = (kind: Target['kind'], catalogId?: string): Target => ({
  engine: { dialect: 'openai', baseUrl: 'http://up.test', model: 'a-model', headers: {}, label: 'deployment-a' },
  kind,
  label: kind === 'provider' ? 'provider:vendor/deployment-a' : kind === 'byo' ? 'byo:mine' : 'house',
  upstream: kind === 'provider' ? 'provider:vendor' : kind === 'byo' ? 'byo:mine' : 'house',
  healthKey: kind,
  callerModel: 'a-model',
  catalogId,
});
/** A call served by `served` after `attempts` upstream attempts. */
const routed = (served: Target, attempts = 1) => ({ outcome: { ...outcome(1_000, 100), target: served, attempts } });
const outcome = (inputTokens: number, outputTokens: number): CallOutcome => ({
  status: 200,
  attempts: 1,
  usage: { inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
  ttftMs: 0,
});

describe('settle', () => {
  let bus: Bus;
  let events: UsageEvent[];
  const store = createMemoryStore();
  const budget = createBudget({ store });
  const deps = () => ({
    budget,
    usage: createUsageEmitter({ producer: bus.producer, logger }),
    pricing: createPricing(),
    logger,
    route: { limiter: memoryDeploymentLimiter() },
  });
  const record = (fields: Partial<CallRecord>): CallRecord => ({
    principal,
    call,
    price: PRICE,
    fairUse: false,
    outcome: outcome(1_000, 100),
    requestId: 'req_settle',
    atMs: 0,
    startedAt: performance.now(),
    dialect: 'chat',
    sessionId: undefined,
    ...fields,
  });

  beforeEach(async () => {
    bus = createBus({ clientId: 'settle-test', logger });
    events = [];
    await bus.consumer.subscribe({
      topic: USAGE_EVENTS_TOPIC,
      groupId: 'settle-test',
      fromBeginning: true,
      handler: async (message) => void events.push(fromBinary(UsageEventSchema, message.value)),
    });
  });

  afterEach(() => bus.close());

  const settled = async (fields: Partial<CallRecord>): Promise<UsageEvent> => {
    await settle(deps(), record(fields));
    await bus.producer.flush();
    expect(events).toHaveLength(1);
    return events[0]!;
  };

  it('a priced call is recorded at its exact cost in whole units, and in whole units only', async () => {
    // 1,000 input at $1/M + 100 output at $10/M = $0.002 = 2,000,000 nano-USD = 2 credits.
    const event = await settled(routed(target('provider', 'a-model'), 2));
    expect(event).toMatchObject({
      upstream: 'provider:vendor',
      provider: 'deployment-a',
      servedBy: 'provider:vendor/deployment-a',
      attempts: 2,
      isByok: false,
      listCostNanoUsd: 2_000_000n,
      creditsChargedMicrocredits: 2_000_000n,
      fairUseMicrocredits: 0n,
    });
    // Money crosses the wire as whole units only: no decimal double is left on the event.
    for (const decimal of ['listCostUsd', 'creditsCharged', 'fairUseCredits'])
      expect(event).not.toHaveProperty(decimal);
  });

  it('a cost finer than a millicredit is charged exactly, while the budget counts it rounded up', async () => {
    // 1 uncached input token at $1/M (1,000 nano-USD), 1 cache read at $0.011/M (11), 1 output at $10/M (10,000).
    const odd: ModelPrice = { ...PRICE, cache_read: 0.011 };
    await store.set(`credits:available:${USER}`, '100000');
    const reservation = await budget.reserve({ userId: USER }, 50);
    const event = await settled({
      price: odd,
      reservation,
      outcome: {
        status: 200,
        target: target('provider', 'a-model'),
        attempts: 1,
        usage: { inputTokens: 2, outputTokens: 1, cacheReadTokens: 1, cacheWriteTokens: 0 },
        ttftMs: 0,
      },
    });
    expect(event.listCostNanoUsd).toBe(11_011n);
    expect(event.creditsChargedMicrocredits).toBe(11_011n);
    // 11.011 millicredits, taken from the balance as 12.
    expect(Number(await store.get(`credits:available:${USER}`))).toBe(100_000 - 12);
  });

  it('a call that cost more than it reserved is charged what it reserved', async () => {
    await store.set(`credits:available:${USER}`, '100000');
    const reservation = await budget.reserve({ userId: USER }, 1_500);
    const event = await settled({ ...routed(target('provider', 'a-model')), reservation });
    expect(event).toMatchObject({
      listCostNanoUsd: 2_000_000n,
      creditsChargedMicrocredits: 1_500_000n,
    });
    expect(Number(await store.get(`credits:available:${USER}`))).toBe(100_000 - 1_500);
  });

  it('a BYO call records its list cost and charges nothing, saying so in whole units', async () => {
    const event = await settled(routed(target('byo')));
    expect(event).toMatchObject({ listCostNanoUsd: 2_000_000n, creditsChargedMicrocredits: 0n, isByok: true });
    expect(event).toMatchObject({ upstream: 'byo:mine', servedBy: 'byo:mine' });
  });

  it('a call served by its own endpoint after a credits reservation releases the reservation whole', async () => {
    await store.set(`credits:available:${USER}`, '100000');
    const reservation = await budget.reserve({ userId: USER }, 1_500);
    const event = await settled({ ...routed(target('byo'), 3), reservation });
    expect(event).toMatchObject({ creditsChargedMicrocredits: 0n, isByok: true, attempts: 3 });
    expect(Number(await store.get(`credits:available:${USER}`))).toBe(100_000);
  });

  it('a call no target answered charges nothing and names the last target tried', async () => {
    const failed = { ...routed(target('provider', 'a-model'), 4).outcome, status: 503 };
    const event = await settled({ outcome: { ...failed, usage: outcome(0, 0).usage } });
    expect(event).toMatchObject({ status: 503, creditsChargedMicrocredits: 0n, attempts: 4 });
    expect(event.servedBy).toBe('provider:vendor/deployment-a');
  });

  it('a response-cache hit is recorded with cache_hit, its tokens, no target and nothing charged', async () => {
    // A hit is never admitted, so it has no price: only its outcome.
    const hit: CallOutcome = { ...outcome(1_000, 100), attempts: 0, cacheHit: true };
    const event = await settled({ price: undefined, outcome: hit });
    expect(event).toMatchObject({
      cacheHit: true,
      status: 200,
      inputTokens: 1_000n,
      outputTokens: 100n,
      listCostNanoUsd: 0n,
      creditsChargedMicrocredits: 0n,
      servedBy: '',
      attempts: 0,
    });
  });

  it('a call answered by an upstream is not a cache hit', async () => {
    expect((await settled(routed(target('provider', 'a-model')))).cacheHit).toBe(false);
  });

  it('a free fair-use call records what it consumed, and counts it against the windows in millicredits', async () => {
    const fairUser = { ...principal, userId: 'usr_fair' } as Principal;
    const event = await settled({
      ...routed(target('house', 'house-fast')),
      principal: fairUser,
      price: houseFastPrice(),
      fairUse: true,
    });
    expect(event.creditsChargedMicrocredits).toBe(0n);
    expect(event.fairUseMicrocredits).toBe(event.listCostNanoUsd);
    expect(event.fairUseMicrocredits).toBeGreaterThan(0n);
    const hour = Math.floor(Date.now() / 3_600_000);
    const countedMilli = Math.ceil(Number(event.fairUseMicrocredits) / 1_000);
    expect(Number(await store.get(`fair:usr_fair:h:${hour}`))).toBe(countedMilli);
  });
});

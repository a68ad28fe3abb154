import { fromBinary } from '@bufbuild/protobuf';
import { createBus, type Bus } from '@sbc/bus';
import { createMemoryStore } from '@sbc/cache';
import { findCatalogModel, type ModelPrice } from '@sbc/catalog';
import { callerDialect } from '@sbc/dialects';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema, type UsageEvent } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import type { Principal } from '../auth/authenticator';
import { createBudget } from '../limits/budget';
import type { ResolvedRoute } from '../routing/resolve';
import { createUsageEmitter } from '../usage/usage-events';
import type { CallOutcome } from './exchange';
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
const call: CallerCall = { adapter: callerDialect('chat'), callerModel: 'a-model', stream: false, includeUsage: false };
const route = (kind: ResolvedRoute['kind']): ResolvedRoute => ({
  callerModel: 'a-model',
  kind,
  engines: [],
  upstream: kind,
});
const outcome = (inputTokens: number, outputTokens: number): CallOutcome => ({
  status: 200,
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

  it('a priced call is recorded at its exact cost in whole units, and the same amounts as decimals', async () => {
    // 1,000 input at $1/M + 100 output at $10/M = $0.002 = 2,000,000 nano-USD = 2 credits.
    const event = await settled({ route: route('provider') });
    expect(event).toMatchObject({
      listCostNanoUsd: 2_000_000n,
      creditsChargedMicrocredits: 2_000_000n,
      fairUseMicrocredits: 0n,
    });
    expect(event).toMatchObject({ listCostUsd: 0.002, creditsCharged: 2, fairUseCredits: 0 });
  });

  it('a cost finer than a millicredit is charged exactly, while the budget counts it rounded up', async () => {
    // 1 uncached input token at $1/M (1,000 nano-USD), 1 cache read at $0.011/M (11), 1 output at $10/M (10,000).
    const odd: ModelPrice = { ...PRICE, cache_read: 0.011 };
    await store.set(`credits:available:${USER}`, '100000');
    const reservation = await budget.reserve({ userId: USER }, 50);
    const event = await settled({
      route: route('provider'),
      price: odd,
      reservation,
      outcome: {
        status: 200,
        usage: { inputTokens: 2, outputTokens: 1, cacheReadTokens: 1, cacheWriteTokens: 0 },
        ttftMs: 0,
      },
    });
    expect(event.listCostNanoUsd).toBe(11_011n);
    expect(event.creditsChargedMicrocredits).toBe(11_011n);
    expect(event.creditsCharged).toBe(0.011_011);
    // 11.011 millicredits, taken from the balance as 12.
    expect(Number(await store.get(`credits:available:${USER}`))).toBe(100_000 - 12);
  });

  it('a call that cost more than it reserved is charged what it reserved', async () => {
    await store.set(`credits:available:${USER}`, '100000');
    const reservation = await budget.reserve({ userId: USER }, 1_500);
    const event = await settled({ route: route('provider'), reservation });
    expect(event).toMatchObject({
      listCostNanoUsd: 2_000_000n,
      creditsChargedMicrocredits: 1_500_000n,
      creditsCharged: 1.5,
    });
    expect(Number(await store.get(`credits:available:${USER}`))).toBe(100_000 - 1_500);
  });

  it('a BYO call records its list cost and charges nothing, saying so in whole units', async () => {
    const event = await settled({ route: route('byo') });
    expect(event).toMatchObject({ listCostNanoUsd: 2_000_000n, creditsChargedMicrocredits: 0n, isByok: true });
  });

  it('a free fair-use call records what it consumed, and counts it against the windows in millicredits', async () => {
    const fairUser = { ...principal, userId: 'usr_fair' } as Principal;
    const event = await settled({ route: route('house'), principal: fairUser, price: houseFastPrice(), fairUse: true });
    expect(event.creditsChargedMicrocredits).toBe(0n);
    expect(event.fairUseMicrocredits).toBe(event.listCostNanoUsd);
    expect(event.fairUseMicrocredits).toBeGreaterThan(0n);
    expect(event.fairUseCredits).toBe(Number(event.fairUseMicrocredits) / 1e6);
    const hour = Math.floor(Date.now() / 3_600_000);
    const countedMilli = Math.ceil(Number(event.fairUseMicrocredits) / 1_000);
    expect(Number(await store.get(`fair:usr_fair:h:${hour}`))).toBe(countedMilli);
  });
});

import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { callerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Principal } from '../auth/authenticator';
import { createBudget, MILLI } from '../limits/budget';
import { createRateLimiter } from '../limits/rate-limit';
import type { Engine } from '../routing/engines';
import type { Target } from '../routing/targets';
import { Admission } from './admit';
import { checkedCall } from './read-call';
import { createPricing } from './pricing';

const engine: Engine = { dialect: 'openai', baseUrl: 'http://up.test', model: 'house', headers: {}, label: 'house' };
const houseRoute: Target = {
  callerModel: 'house',
  kind: 'house',
  engine,
  label: 'house',
  upstream: 'house',
  healthKey: 'house:house:0',
  catalogId: 'house',
};
const fastRoute: Target = { ...houseRoute, callerModel: 'house-fast', catalogId: 'house-fast' };
const omniRoute: Target = { ...houseRoute, callerModel: 'house-omni', catalogId: 'house-omni' };
const byoRoute: Target = {
  callerModel: 'mine',
  kind: 'byo',
  engine: { ...engine, model: 'mine' },
  label: 'byo:mine',
  upstream: 'byo:mine',
  healthKey: 'byo:usr_1:mine',
};
const principal: Principal = {
  kind: 'key',
  userId: 'usr_1',
  scopes: 'unrestricted',
  revoked: false,
  operator: false,
} as Principal;

function setUp(limitPerMinute = 5) {
  const store: SharedStore = createMemoryStore();
  const deps = {
    rateLimit: createRateLimiter({ store, limitPerMinute }),
    budget: createBudget({ store }),
    pricing: createPricing(),
    defaultMaxTokens: 4_096,
  };
  const headers: Record<string, string> = {};
  const admission = () => new Admission(deps, principal, { addHeaders: (more) => Object.assign(headers, more) });
  return { store, headers, admission };
}

const chatCall = (body: Record<string, unknown> = {}) =>
  checkedCall(callerDialect('chat'), { model: 'house', messages: [{ role: 'user', content: 'hello' }], ...body });

describe('admitting a call', () => {
  it("a call on the caller's own endpoint reserves nothing and takes one request from its bucket", async () => {
    const { headers, admission } = setUp();
    const call = chatCall();
    const admitted = admission();
    await admitted.admit(call, byoRoute, 100);
    expect(admitted.terms.reservation).toBeUndefined();
    expect(call.outputLimit).toBeUndefined();
    expect(headers).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4' });
  });

  it('a priced call reserves its worst case from the balance, in the same round trip as its bucket', async () => {
    const { store, headers, admission } = setUp();
    await store.set('credits:available:usr_1', String(1_000 * MILLI));
    const call = chatCall({ max_tokens: 100 });
    const admitted = admission();
    await admitted.admit(call, houseRoute, 100);
    expect(admitted.terms.price).toBeDefined();
    expect(admitted.terms.reservation?.reservedMilli).toBeGreaterThan(0);
    expect(call.outputLimit).toBe(100);
    expect(Number(await store.get('credits:available:usr_1'))).toBe(
      1_000 * MILLI - admitted.terms.reservation!.reservedMilli,
    );
    expect(headers['x-ratelimit-remaining']).toBe('4');
  });

  it('a priced call with no limit of its own is held to what its reservation pays for', async () => {
    const { store, admission } = setUp();
    await store.set('credits:available:usr_1', String(MILLI / 10));
    const call = chatCall();
    await admission().admit(call, houseRoute, 100);
    expect(call.outputLimit).toBeGreaterThan(0);
    expect(call.outputLimit).toBeLessThan(4_096);
  });

  it('an output limit past the catalog model’s is refused, naming the field the caller used', async () => {
    const { admission } = setUp();
    const call = chatCall({ max_completion_tokens: 10_000_000 });
    const refusal = await admission()
      .admit(call, fastRoute, 100)
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 400, issues: [{ path: 'max_completion_tokens', code: 'too_big' }] });
  });

  it('free fair use reserves nothing and holds the call to the model’s output limit', async () => {
    const { admission } = setUp();
    const call = chatCall({ model: 'house-fast' });
    const admitted = admission();
    await admitted.admit(call, fastRoute, 100);
    expect(admitted.terms.fairUse).toBe(true);
    expect(admitted.terms.reservation).toBeUndefined();
    expect(call.outputLimit).toBe(64_000);
  });

  it('targets of one model share one reservation; a fallback model releases it and reserves its own', async () => {
    const { store, headers, admission } = setUp();
    await store.set('credits:available:usr_1', String(1_000 * MILLI));
    const call = chatCall({ max_tokens: 100 });
    const admitted = admission();
    await admitted.admit(call, byoRoute, 100);
    expect(admitted.terms.reservation).toBeUndefined();
    await admitted.admit(call, houseRoute, 100);
    const first = admitted.terms.reservation!;
    await admitted.admit(call, { ...houseRoute, healthKey: 'house:house:1' }, 100);
    expect(admitted.terms.reservation).toBe(first);
    await admitted.admit(call, omniRoute, 100);
    expect(admitted.terms.reservation).not.toBe(first);
    // Only the fallback's reservation is held; the bucket was taken once.
    expect(Number(await store.get('credits:available:usr_1'))).toBe(
      1_000 * MILLI - admitted.terms.reservation!.reservedMilli,
    );
    expect(headers['x-ratelimit-remaining']).toBe('4');
  });

  it('a model the budget cannot pay for is refused 402, and again without asking the store', async () => {
    const { store, admission } = setUp();
    await store.set('credits:available:usr_1', '0');
    const admitted = admission();
    const call = chatCall({ max_tokens: 100 });
    await expect(admitted.admit(call, houseRoute, 100)).rejects.toMatchObject({ status: 402 });
    await store.set('credits:available:usr_1', String(1_000 * MILLI));
    await expect(admitted.admit(call, houseRoute, 100)).rejects.toMatchObject({ status: 402 });
    await expect(admitted.admit(call, byoRoute, 100)).resolves.toBeUndefined();
  });

  it('an embeddings call reserves its input alone, counted by the tokenizer when its bytes do not fit', async () => {
    const { store, admission } = setUp();
    // 12,000 bytes of input at house-embed's 20 credits per 1M tokens is 240 millicredits; its 2,000 words, 40.
    await store.set('credits:available:usr_1', '100');
    const input = 'hello '.repeat(2_000);
    const call = checkedCall(callerDialect('embeddings'), { model: 'house-embed', input });
    const admitted = admission();
    const embedRoute: Target = { ...houseRoute, callerModel: 'house-embed', catalogId: 'house-embed' };
    await admitted.admit(call, embedRoute, Buffer.byteLength(input));
    expect(call.outputLimit).toBe(0);
    expect(admitted.terms.reservation?.reservedMilli).toBeGreaterThan(30);
    expect(admitted.terms.reservation?.reservedMilli).toBeLessThanOrEqual(100);
  });

  it('a call refused before it took from its bucket still counts once, and a spent bucket answers 429', async () => {
    const { headers, admission } = setUp(1);
    const first = admission();
    await first.takeWithoutTarget();
    expect(headers['x-ratelimit-remaining']).toBe('0');
    // Taken once only, however often it is asked.
    await first.takeWithoutTarget();
    const refusal = await admission()
      .takeWithoutTarget()
      .catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'rate_limited', status: 429 });
  });
});

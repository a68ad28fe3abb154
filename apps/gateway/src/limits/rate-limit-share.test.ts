import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { ApiError } from '@sbc/errors';
import { createLogger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import { BATCH_YIELD_HEADER, createRateLimiter } from './rate-limit';
import { createWindowLeases } from './window-leases';

const logger = createLogger({ service: 'test', level: 'silent' });
const settled = () => new Promise((resolve) => setImmediate(resolve));
const BATCH = 'batch_01JDQZ4P0F8B7C6D5E4F3G2H1N';

const parent = (rpm?: number, tpm?: number) =>
  ({
    kind: 'key',
    userId: 'usr_1',
    key: {
      id: 'key_parent',
      rpm: rpm === undefined ? undefined : BigInt(rpm),
      tpm: tpm === undefined ? undefined : BigInt(tpm),
    },
    scopes: [],
  }) as unknown as Principal;
/** The key the runs service mints for a batch: its parent's limits, the batch's id, the parent's id. */
const batchKey = (rpm?: number, parentKeyId: string | undefined = 'key_parent', tpm?: number) =>
  ({
    kind: 'key',
    userId: 'usr_1',
    key: {
      id: 'key_batch',
      batchId: BATCH,
      parentKeyId,
      rpm: rpm === undefined ? undefined : BigInt(rpm),
      tpm: tpm === undefined ? undefined : BigInt(tpm),
    },
    scopes: [],
  }) as unknown as Principal;
const session = { kind: 'session', userId: 'usr_1', scopes: 'unrestricted' } as unknown as Principal;

async function outcome(taking: Promise<unknown>): Promise<'ok' | 'yield' | 'refused'> {
  try {
    await taking;
    return 'ok';
  } catch (error) {
    expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
    return (error as ApiError).headers?.[BATCH_YIELD_HEADER] === 'share' ? 'yield' : 'refused';
  }
}

async function tally(count: number, take: () => Promise<unknown>, between?: () => Promise<unknown>) {
  const seen = { ok: 0, yield: 0, refused: 0 };
  for (let i = 0; i < count; i++) {
    seen[await outcome(take())] += 1;
    await between?.();
  }
  return seen;
}

describe("a batch's lines in their parent's request window", () => {
  it('take at most the share, and the parent keeps the rest, the two never past its limit', async () => {
    const hit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 1_200, batchShare: 0.5 });
    expect(await tally(8, () => hit(batchKey(10)))).toEqual({ ok: 5, yield: 3, refused: 0 });
    expect(await tally(8, () => hit(parent(10)))).toEqual({ ok: 5, yield: 0, refused: 3 });
  });

  it('yield to interactive calls: what the parent used of the share is not the batch’s', async () => {
    const hit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 1_200, batchShare: 0.5 });
    expect(await tally(4, () => hit(parent(10)))).toEqual({ ok: 4, yield: 0, refused: 0 });
    expect(await tally(3, () => hit(batchKey(10)))).toEqual({ ok: 1, yield: 2, refused: 0 });
    expect(await tally(6, () => hit(parent(10)))).toEqual({ ok: 5, yield: 0, refused: 1 });
  });

  it("a refusal says it is the batch's share, with retry-after, and only a batch key's says it", async () => {
    const hit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 1_200, batchShare: 0.5 });
    await hit(batchKey(2));
    const refused = (await hit(batchKey(2)).catch((error: unknown) => error)) as ApiError;
    expect(refused.message).toMatch(/at most 1 of the creating key's 2 requests per minute/);
    expect(Number(refused.headers?.['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers?.['x-ratelimit-limit']).toBe('1');
    const own = (await hit(parent(2))
      .then(() => hit(parent(2)))
      .catch((error: unknown) => error)) as ApiError;
    expect(own.headers?.[BATCH_YIELD_HEADER]).toBeUndefined();
  });

  it('a parent with no rpm: the share of the service ceiling; a share of a tiny limit is still one', async () => {
    const hit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 9, batchShare: 0.5 });
    expect(await tally(6, () => hit(batchKey()))).toEqual({ ok: 4, yield: 2, refused: 0 });
    expect(await tally(6, () => hit(parent()))).toEqual({ ok: 5, yield: 0, refused: 1 });
    const tiny = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 1_200, batchShare: 0.1 });
    expect(await tally(2, () => tiny(batchKey(3)))).toEqual({ ok: 1, yield: 1, refused: 0 });
  });

  it("a batch created with a session shares the account's own bucket", async () => {
    const hit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 10, batchShare: 0.5 });
    const sessionBatch = { ...batchKey(), key: { ...batchKey().key!, parentKeyId: undefined } } as Principal;
    expect(await tally(6, () => hit(sessionBatch))).toEqual({ ok: 5, yield: 1, refused: 0 });
    expect(await tally(6, () => hit(session))).toEqual({ ok: 5, yield: 0, refused: 1 });
    // Another key of the account has its own bucket.
    await expect(hit(parent())).resolves.toBeDefined();
  });

  it("a model call's bucket: a share of the parent's tokens too; a line over the whole share is no yield", async () => {
    const rateLimit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 1_200, batchShare: 0.5 });
    const take = (principal: Principal, tokens: number) => rateLimit.take(rateLimit.bucket(principal), () => tokens);
    await expect(take(batchKey(undefined, 'key_parent', 1_000), 400)).resolves.toBeDefined();
    expect(await outcome(take(batchKey(undefined, 'key_parent', 1_000), 200))).toBe('yield');
    expect(await outcome(take(batchKey(undefined, 'key_parent', 1_000), 600))).toBe('refused');
    // The parent's own call counts the line's 400 tokens: 600 are left of its 1,000.
    await expect(take(parent(undefined, 1_000), 600)).resolves.toBeDefined();
    expect(await outcome(take(parent(undefined, 1_000), 1))).toBe('refused');
  });
});

/** A store that counts the round trips made to it. */
function countingStore(): { store: SharedStore; trips: () => number } {
  const inner = createMemoryStore();
  let trips = 0;
  return {
    store: {
      ...inner,
      batch: (ops) => {
        trips++;
        return inner.batch(ops);
      },
    },
    trips: () => trips,
  };
}

describe('the share on leases (a busy window, no round trip)', () => {
  it('a busy batch takes exactly its share from its own lease, the parent the rest from its own', async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const hit = createRateLimiter({ store, limitPerMinute: 1_200, batchShare: 0.5, leases });
    const lines = await tally(700, () => hit(batchKey()), settled);
    expect(lines).toEqual({ ok: 600, yield: 100, refused: 0 });
    // Mostly served from the share's lease: far fewer round trips than calls.
    expect(trips()).toBeLessThan(350);
    const interactive = await tally(700, () => hit(parent()), settled);
    expect(interactive).toEqual({ ok: 600, yield: 0, refused: 100 });
    await leases.close();
  });

  it('interactive calls and a batch interleaved never pass the limit together, the batch never its share', async () => {
    const { store } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const hit = createRateLimiter({ store, limitPerMinute: 400, batchShare: 0.25, leases });
    const seen = { batch: 0, interactive: 0 };
    for (let i = 0; i < 1_000; i++) {
      if ((await outcome(hit(batchKey()))) === 'ok') seen.batch += 1;
      if ((await outcome(hit(parent()))) === 'ok') seen.interactive += 1;
      await settled();
    }
    expect(seen.batch).toBeLessThanOrEqual(100);
    expect(seen.batch + seen.interactive).toBe(400);
    expect(seen.interactive).toBeGreaterThanOrEqual(300);
    await leases.close();
  });
});

describe('the share of a parent with tpm on leases (request hit and tokens, both or neither)', () => {
  const MINUTE = 60_000;
  /** What the store's window at `key` holds, once the leases are given back. */
  const used = async (store: SharedStore, key: string, limit: number) =>
    limit - (await store.slidingWindowHit(key, { limit, windowMs: MINUTE, cost: 0 })).remaining;
  /** A model call through the bucket, settled at `actual` tokens when admitted. */
  const call = (
    rateLimit: ReturnType<typeof createRateLimiter>,
    principal: Principal,
    counted: number,
    actual = counted,
  ) => rateLimit.take(rateLimit.bucket(principal), () => counted).then((taken) => taken.tokens?.settle(actual));

  it("a busy batch takes its tokens share on its own leases of the parent's windows, the parent the rest", async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const rateLimit = createRateLimiter({ store, limitPerMinute: 1_200, batchShare: 0.5, leases });
    // 64,000 tokens a minute: the share is 32,000, i.e. 320 lines of 100 tokens, well under 600 requests.
    const lines = await tally(400, () => call(rateLimit, batchKey(undefined, 'key_parent', 64_000), 100), settled);
    // Near the share, a lease may keep less than a line's tokens until it is given back: one line at most.
    expect(lines.refused).toBe(0);
    expect(lines.ok).toBeLessThanOrEqual(320);
    expect(lines.ok).toBeGreaterThanOrEqual(319);
    expect(lines.ok + lines.yield).toBe(400);
    // Request hit and tokens from leases: far fewer round trips than the 400 the calls make per call.
    expect(trips()).toBeLessThan(300);
    await leases.close();
    // Both in the parent's windows, nothing in windows of the batch key's own.
    expect(await used(store, 'tpm:key_parent', 64_000)).toBe(lines.ok * 100);
    expect(await used(store, 'rl:key_parent', 1_200)).toBe(lines.ok);
    expect(await used(store, 'tpm:key_batch', 64_000)).toBe(0);
    expect(await used(store, 'rl:key_batch', 1_200)).toBe(0);

    const ownLeases = createWindowLeases({ store, logger });
    const own = createRateLimiter({ store, limitPerMinute: 1_200, batchShare: 0.5, leases: ownLeases });
    const interactive = await tally(400, () => call(own, parent(undefined, 64_000), 100), settled);
    expect(interactive.yield).toBe(0);
    // The parent keeps the rest of its tpm (less one call's worth a lease may keep), the two never pass it together.
    expect(interactive.ok).toBeGreaterThanOrEqual(640 - lines.ok - 1);
    await ownLeases.close();
    expect(lines.ok + interactive.ok).toBeLessThanOrEqual(640);
    expect(await used(store, 'tpm:key_parent', 64_000)).toBe((lines.ok + interactive.ok) * 100);
  });

  it('a busy batch within the tokens share meets the request share, from its own lease', async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const rateLimit = createRateLimiter({ store, limitPerMinute: 1_200, batchShare: 0.5, leases });
    // Lines of 10 tokens: 3,200 fit the tokens share, 600 the request share.
    const lines = await tally(700, () => call(rateLimit, batchKey(undefined, 'key_parent', 64_000), 10), settled);
    expect(lines).toEqual({ ok: 600, yield: 100, refused: 0 });
    expect(trips()).toBeLessThan(350);
    await leases.close();
    expect(await used(store, 'rl:key_parent', 1_200)).toBe(600);
    expect(await used(store, 'tpm:key_parent', 64_000)).toBe(6_000);
  });

  it('interleaved with the parent, each keeps its own leases; a line is corrected to its real tokens', async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const rateLimit = createRateLimiter({ store, limitPerMinute: 1_200, batchShare: 0.5, leases });
    const seen = { batch: 0, interactive: 0 };
    for (let i = 0; i < 150; i++) {
      // A line counts 100 tokens and uses 50; the parent's calls count and use 100.
      const line = call(rateLimit, batchKey(undefined, 'key_parent', 64_000), 100, 50);
      if ((await outcome(line)) === 'ok') seen.batch += 1;
      if ((await outcome(call(rateLimit, parent(undefined, 64_000), 100))) === 'ok') seen.interactive += 1;
      await settled();
    }
    expect(seen).toEqual({ batch: 150, interactive: 150 });
    // Two leases on each window, neither given back for the other's calls: per call would be 300 trips and more.
    expect(trips()).toBeLessThan(100);
    await leases.close();
    expect(await used(store, 'tpm:key_parent', 64_000)).toBe(150 * 50 + 150 * 100);
    expect(await used(store, 'rl:key_parent', 1_200)).toBe(300);
  });
});

import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { MILLI } from './budget';
import { createFairUseViews, fairUseKeys, type FairUseViewOptions, type FairUseViews } from './fair-use';

const logger = createLogger({ service: 'test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const AT = Date.parse('2026-11-22T12:30:00Z');

/** A memory store that counts its round trips, and fails its batches while `failing` is set. */
function countingStore() {
  const inner = createMemoryStore();
  const counts = { trips: 0, failing: false };
  const store: SharedStore = {
    ...inner,
    getMany: (keys) => (counts.trips++, inner.getMany(keys)),
    batch: (ops) => {
      counts.trips++;
      return counts.failing ? Promise.reject(new Error('the store is down')) : inner.batch(ops);
    },
  };
  return { store, inner, counts };
}

/** What the store holds of the user's 5-hour window, in credits. */
async function hoursInStore(store: SharedStore, userId: string, at = AT): Promise<number> {
  const values = await store.getMany(fairUseKeys(userId, at).slice(0, 5));
  return values.reduce((total, value) => total + Number(value ?? 0), 0) / MILLI;
}

describe('fair-use views', () => {
  const made: FairUseViews[] = [];
  const viewsOn = (store: SharedStore, options: Partial<FairUseViewOptions> = {}) => {
    const views = createFairUseViews({ store, logger, options: { refreshMs: 60_000, flushMs: 60_000, ...options } });
    made.push(views);
    return views;
  };
  afterEach(async () => {
    await Promise.all(made.splice(0).map((views) => views.close()));
  });

  it('a busy user is answered from the view with no round trip, and the flush sends what was used', async () => {
    const { store, inner, counts } = countingStore();
    const views = viewsOn(store);
    expect(await views.left('usr_a', AT)).toBe(true);
    expect(counts.trips).toBe(1);
    for (let i = 0; i < 50; i++) {
      expect(await views.left('usr_a', AT + i)).toBe(true);
      await views.record('usr_a', 2 * MILLI, AT + i);
    }
    expect(counts.trips).toBe(1);
    expect(await hoursInStore(inner, 'usr_a')).toBe(0);
    await views.close();
    // One flush, every counter in it.
    expect(counts.trips).toBe(2);
    expect(await hoursInStore(inner, 'usr_a')).toBe(100);
    expect(Number(await inner.get(fairUseKeys('usr_a', AT)[5]!))).toBe(100 * MILLI);
  });

  it('increments are flushed in the background, and a failed flush keeps them for the next one', async () => {
    const { store, inner, counts } = countingStore();
    const views = viewsOn(store, { flushMs: 20 });
    await views.left('usr_b', AT);
    counts.failing = true;
    await views.record('usr_b', 7 * MILLI, AT);
    await sleep(60);
    expect(await hoursInStore(inner, 'usr_b')).toBe(0);
    counts.failing = false;
    await sleep(60);
    expect(await hoursInStore(inner, 'usr_b')).toBe(7);
  });

  it('near an allowance a user is read and written on every call, and refused once it is spent', async () => {
    const { store, inner, counts } = countingStore();
    const views = viewsOn(store);
    await views.left('usr_c', AT);
    // 440 of the 500 credits: still a tenth or more away, so counted locally.
    await views.record('usr_c', 440 * MILLI, AT);
    expect(await views.left('usr_c', AT)).toBe(true);
    // 20 more: within a tenth of the 500 credits.
    await views.record('usr_c', 20 * MILLI, AT);
    const before = counts.trips;
    expect(await views.left('usr_c', AT)).toBe(true);
    await views.record('usr_c', 39 * MILLI, AT);
    expect(counts.trips).toBe(before + 2);
    // What was recorded near the allowance is in the store at once (with the rest, through the reads' view).
    expect(await views.left('usr_c', AT)).toBe(true);
    await views.record('usr_c', 1 * MILLI, AT);
    expect(await views.left('usr_c', AT)).toBe(false);
    // Another edge, with no view of its own, reads the spent allowance.
    expect(await viewsOn(inner).left('usr_c', AT)).toBe(false);
  });

  it("another edge's use is seen once it has flushed and this view is read again", async () => {
    const store = createMemoryStore();
    const first = viewsOn(store, { refreshMs: 20, flushMs: 20 });
    const second = viewsOn(store, { refreshMs: 20, flushMs: 20 });
    expect(await second.left('usr_d', AT)).toBe(true);
    await first.left('usr_d', AT);
    await first.record('usr_d', 500 * MILLI, AT);
    // Within its refresh interval the second edge still answers from its view: the documented overshoot.
    expect(await second.left('usr_d', AT)).toBe(true);
    await sleep(80);
    expect(await second.left('usr_d', AT)).toBe(false);
  });

  it('a new hour reads the windows again', async () => {
    const { store, counts } = countingStore();
    const views = viewsOn(store);
    await views.left('usr_e', AT);
    await views.left('usr_e', AT + 1_000);
    expect(counts.trips).toBe(1);
    await views.left('usr_e', AT + 3_600_000);
    expect(counts.trips).toBe(2);
  });

  it('a flush the store has applied is counted once by a read made before its answer comes', async () => {
    const inner = createMemoryStore();
    const answers: (() => void)[] = [];
    // The store applies each batch at once and answers it only when the test says.
    const store: SharedStore = {
      ...inner,
      batch: async (ops) => {
        const results = await inner.batch(ops);
        await new Promise<void>((resolve) => answers.push(resolve));
        return results;
      },
    };
    const views = viewsOn(store, { refreshMs: 1, flushMs: 10 });
    await views.left('usr_f', AT);
    await views.record('usr_f', 300 * MILLI, AT);
    while (answers.length === 0) await sleep(5);
    // The flush is in the store and not yet answered: the read finds its 300 credits there, and only there.
    expect(await views.left('usr_f', AT)).toBe(true);
    answers.splice(0).forEach((answer) => answer());
  });
});

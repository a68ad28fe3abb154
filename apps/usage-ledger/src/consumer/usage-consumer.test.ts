import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { decodeUsageEvent } from './usage-consumer';

const encode = (init: MessageInitShape<typeof UsageEventSchema>) =>
  toBinary(
    UsageEventSchema,
    create(UsageEventSchema, {
      requestId: 'req_1',
      accountId: 'usr_1',
      model: 'house',
      status: 200,
      ts: timestampFromMs(0),
      ...init,
    }),
  );

function rowOf(bytes: Uint8Array) {
  const decoded = decodeUsageEvent(bytes);
  if ('problem' in decoded) throw new Error(decoded.problem);
  return decoded.row;
}

function problemOf(bytes: Uint8Array): string {
  const decoded = decodeUsageEvent(bytes);
  if (!('problem' in decoded)) throw new Error('expected the event to be refused');
  return decoded.problem;
}

describe('decodeUsageEvent', () => {
  it('input and output tokens become the prompt and completion counts, list cost the total cost', () => {
    const row = rowOf(
      encode({
        inputTokens: 10n,
        outputTokens: 20n,
        cacheReadTokens: 3n,
        cacheWriteTokens: 4n,
        listCostNanoUsd: 500_000_000n,
        creditsChargedMicrocredits: 2_000_000n,
      }),
    );
    expect(row).toMatchObject({
      tokensPrompt: 10n,
      tokensCompletion: 20n,
      cacheRead: 3n,
      cacheWrite: 4n,
      totalCostNanoUsd: 500_000_000n,
      creditsChargedMicrocredits: 2_000_000n,
    });
  });

  it('the cache discount is what the cache reads saved at the catalog prices the edge charges with', () => {
    // house: input 200, cache read 5 credits per 1M tokens; 1M cache reads save 195 credits = $0.195.
    expect(
      rowOf(encode({ model: 'house', inputTokens: 1_200_000n, cacheReadTokens: 1_000_000n })).cacheDiscountNanoUsd,
    ).toBe(195_000_000n);
    expect(rowOf(encode({ model: 'house', cacheReadTokens: 0n })).cacheDiscountNanoUsd).toBe(0n);
    expect(
      rowOf(encode({ model: 'a-model-the-catalog-does-not-price', cacheReadTokens: 1_000n })).cacheDiscountNanoUsd,
    ).toBe(0n);
  });

  it('strings the edge left unset are stored as NULL, not as empty text', () => {
    const row = rowOf(
      encode({ userId: '', keyId: '', keyLabel: '', orgId: undefined, upstream: '', route: '', sessionId: undefined }),
    );
    expect(row).toMatchObject({
      userId: null,
      keyId: null,
      keyLabel: null,
      orgId: null,
      upstream: null,
      route: null,
      sessionId: null,
    });
  });

  it('a call that produced no token has an unknown time to first token, not zero', () => {
    expect(rowOf(encode({ ttftMs: 0n, latencyMs: 0n }))).toMatchObject({ ttftMs: null, latencyMs: 0 });
  });

  it('a duration too large for its column is recorded as unknown, so the charge is still applied', () => {
    expect(rowOf(encode({ latencyMs: 2n ** 40n, ttftMs: -5n, creditsChargedMicrocredits: 3n }))).toMatchObject({
      latencyMs: null,
      ttftMs: null,
      creditsChargedMicrocredits: 3n,
    });
  });

  it('bytes that are not a UsageEvent are refused with the decoder’s reason', () => {
    expect(problemOf(new Uint8Array([0xff, 0xff, 0xff, 0xff]))).toMatch(/^not a UsageEvent: /);
  });

  it('an event without request id, account or timestamp is refused: it could not be applied once', () => {
    expect(problemOf(new Uint8Array(0))).toBe('no request_id');
    expect(problemOf(encode({ accountId: '' }))).toBe('no account_id');
    expect(problemOf(encode({ ts: undefined }))).toBe('no valid ts');
  });

  it('amounts stay whole from the wire to the row: no float rounds them, however large', () => {
    // 2^53 + 1 is the first whole number a double cannot hold.
    const past = 2n ** 53n + 1n;
    const row = rowOf(
      encode({ listCostNanoUsd: past, creditsChargedMicrocredits: 12_345_678_901_234_567n, fairUseMicrocredits: 7n }),
    );
    expect(row).toMatchObject({
      totalCostNanoUsd: past,
      creditsChargedMicrocredits: 12_345_678_901_234_567n,
      fairUseMicrocredits: 7n,
    });
  });

  it('a free call is free, and an amount an edge left out reads as 0', () => {
    const free = encode({ listCostNanoUsd: 0n, creditsChargedMicrocredits: 0n, fairUseMicrocredits: 0n });
    expect(rowOf(free)).toMatchObject({
      totalCostNanoUsd: 0n,
      creditsChargedMicrocredits: 0n,
      fairUseMicrocredits: 0n,
    });
    expect(rowOf(encode({ creditsChargedMicrocredits: 4n }))).toMatchObject({
      totalCostNanoUsd: 0n,
      creditsChargedMicrocredits: 4n,
      fairUseMicrocredits: 0n,
    });
  });

  it('whole units past what their column holds (18 digits) are refused rather than retried forever', () => {
    const tooLarge = 10n ** 18n;
    expect(problemOf(encode({ listCostNanoUsd: tooLarge }))).toMatch(/^list_cost_nano_usd out of range/);
    expect(problemOf(encode({ creditsChargedMicrocredits: -tooLarge }))).toMatch(/^credits_charged_microcredits out/);
    expect(problemOf(encode({ fairUseMicrocredits: 2n ** 63n - 1n }))).toMatch(/^fair_use_microcredits out of range/);
    expect(rowOf(encode({ listCostNanoUsd: tooLarge - 1n })).totalCostNanoUsd).toBe(tooLarge - 1n);
  });

  it('the event id is the row key; an event from before event ids is keyed by its request id', () => {
    expect(rowOf(encode({ eventId: 'evt_1', requestId: 'shared' }))).toMatchObject({
      eventId: 'evt_1',
      requestId: 'shared',
    });
    expect(rowOf(encode({ eventId: '', requestId: 'req_old' }))).toMatchObject({
      eventId: 'req_old',
      requestId: 'req_old',
    });
  });

  it('strings PostgreSQL would refuse arrive storable, whatever wrote the event', () => {
    const row = rowOf(encode({ model: 'x\u0000y', keyLabel: '\u0000', sessionId: 'a\u0000b', requestId: 'req\u0000' }));
    expect(row).toMatchObject({ model: 'xy', keyLabel: null, sessionId: 'ab', requestId: 'req', eventId: 'req' });
  });
});

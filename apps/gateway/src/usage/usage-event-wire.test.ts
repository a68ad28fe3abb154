import { create, fromBinary, ScalarType, toBinary, type DescField } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { storableText } from '@sbc/events';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { encodeUsageEvent, type UsageFields } from './usage-event-wire';

const EVENT_ID = 'evt_01JDQZ4P0F8B7C6D5E4F3G2H1N';

/**
 * What @bufbuild/protobuf writes for the same event with its strings made storable: the reference the
 * hand-written encoder must match.
 */
function reference(fields: UsageFields, eventId = EVENT_ID): Uint8Array {
  const { atMs, ...rest } = fields;
  const storable = Object.fromEntries(
    Object.entries({ ...rest, eventId }).map(([name, value]) => [
      name,
      typeof value === 'string' ? storableText(value) : value,
    ]),
  );
  return toBinary(UsageEventSchema, create(UsageEventSchema, { ...storable, ts: timestampFromMs(atMs) }));
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

// A small deterministic generator (mulberry32), so a failure reproduces.
function rng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = [
  '',
  'a',
  'req_01JD0000000000000000000000',
  'house-omni',
  'claude-sonnet-5-5',
  'byo:my-endpoint',
  'clé ünïcödé',
  '模型',
  '🚀 emoji 👩‍💻',
  'x'.repeat(300),
  'x'.repeat(5000),
  // What PostgreSQL or UTF-8 cannot hold; the encoder writes them cleaned.
  'x\u0000y',
  '\u0000',
  'lone \uD800 high',
  '\uDC00 lone low',
];
const INT64S = [
  0n,
  1n,
  127n,
  128n,
  300n,
  16_384n,
  2n ** 31n,
  2n ** 32n + 7n,
  BigInt(Number.MAX_SAFE_INTEGER),
  BigInt(Number.MAX_SAFE_INTEGER) + 2n,
  2n ** 63n - 1n,
  -1n,
  -(2n ** 63n),
];
const INT32S = [0, 1, 200, 499, 2 ** 31 - 1, -1, -(2 ** 31)];

/**
 * A random event with every field of the schema given a value of its kind (optional fields sometimes
 * absent, sometimes empty). It reads the field list from UsageEventSchema, so a field added to the proto is
 * filled here and written by toBinary; the encoder must then write it too.
 */
function randomEvent(next: () => number): { fields: UsageFields; eventId: string } {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const event: Record<string, unknown> = {};
  for (const field of UsageEventSchema.fields) event[field.localName] = valueFor(field, pick, next);
  const { ts, eventId, ...rest } = event;
  return { fields: { ...(rest as Omit<UsageFields, 'atMs'>), atMs: ts as number }, eventId: eventId as string };
}

function valueFor(field: DescField, pick: <T>(values: readonly T[]) => T, next: () => number): unknown {
  if (field.fieldKind === 'message' && field.message.typeName === 'google.protobuf.Timestamp') {
    // Epoch milliseconds, whole as Date.now() gives them: 0, before the epoch, around now, far ahead.
    return pick([0, 1, 999, 1_000, -1_500, Date.UTC(2026, 10, 24, 8, 42, 22, 123), Math.floor(next() * 4e12)]);
  }
  if (field.fieldKind !== 'scalar')
    throw new Error(`the usage event encoder test does not know field ${field.name} (${field.fieldKind})`);
  // Fields with explicit presence (`optional`) are sometimes left out altogether.
  if (field.proto.proto3Optional && next() < 0.3) return undefined;
  switch (field.scalar) {
    case ScalarType.STRING:
      return pick(STRINGS);
    case ScalarType.INT64:
      return pick(INT64S);
    case ScalarType.INT32:
      return pick(INT32S);
    case ScalarType.BOOL:
      return next() < 0.5;
    default:
      throw new Error(`the usage event encoder test does not know field ${field.name} (scalar type ${field.scalar})`);
  }
}

/** Where two encodings part, and the event with long strings cut, so a failure stays readable. */
function describeDifference(ours: string, theirs: string, event: UsageFields): string {
  let at = 0;
  while (at < ours.length && ours[at] === theirs[at]) at++;
  const shown = JSON.stringify(event, (_key, value: unknown) =>
    typeof value === 'bigint'
      ? `${value}n`
      : typeof value === 'string' && value.length > 40
        ? `${value.slice(0, 20)}…(${value.length})`
        : value,
  );
  return (
    `first difference at byte ${Math.floor(at / 2)}: ours …${ours.slice(at, at + 24)} vs toBinary ` +
    `…${theirs.slice(at, at + 24)}; event ${shown}`
  );
}

function typicalEvent(): UsageFields {
  return {
    requestId: 'req_01JDQZ4P0F8B7C6D5E4F3G2H1J',
    accountId: 'usr_01JDQZ4P0F8B7C6D5E4F3G2H1K',
    userId: 'usr_01JDQZ4P0F8B7C6D5E4F3G2H1K',
    keyId: 'key_01JDQZ4P0F8B7C6D5E4F3G2H1M',
    orgId: undefined,
    model: 'house',
    upstreamModel: 'sim-large',
    upstream: 'house',
    provider: 'sim',
    dialectIn: 'chat',
    dialectOut: 'openai',
    route: 'auto',
    inputTokens: 17n,
    outputTokens: 20n,
    cacheReadTokens: 0n,
    cacheWriteTokens: 0n,
    reasoningTokens: 0n,
    isByok: false,
    status: 200,
    latencyMs: 3n,
    ttftMs: 3n,
    sessionId: 'sess-1',
    stream: false,
    keyLabel: 'Full access',
    atMs: Date.UTC(2026, 10, 24, 8, 42, 22, 123),
    servedBy: 'house',
    attempts: 2,
    cacheHit: true,
    guardrailId: 'grd_01',
    guardrailAction: 'redact',
  };
}

describe('encodeUsageEvent', () => {
  it('writes a typical call exactly as toBinary does, and it decodes to the same event', () => {
    const event = typicalEvent();
    const bytes = encodeUsageEvent(event, EVENT_ID);
    expect(hex(bytes)).toBe(hex(reference(event)));
    const decoded = fromBinary(UsageEventSchema, bytes);
    expect(decoded.requestId).toBe(event.requestId);
    expect(decoded.eventId).toBe(EVENT_ID);
    expect(decoded.outputTokens).toBe(20n);
    expect(decoded.sessionId).toBe('sess-1');
    expect(decoded.orgId).toBeUndefined();
    expect(Number(decoded.ts!.seconds) * 1000 + decoded.ts!.nanos / 1e6).toBe(event.atMs);
  });

  it('leaves out proto3 zero values but writes optional fields that are set, even empty', () => {
    const empty: UsageFields = {
      ...typicalEvent(),
      requestId: '',
      inputTokens: 0n,
      isByok: false,
      status: 0,
      orgId: '',
      sessionId: undefined,
    };
    expect(hex(encodeUsageEvent(empty, ''))).toBe(hex(reference(empty, '')));
    const decoded = fromBinary(UsageEventSchema, encodeUsageEvent(empty, ''));
    expect(decoded.orgId).toBe('');
    expect(decoded.sessionId).toBeUndefined();
  });

  it('writes the whole-unit amounts whenever they are set, even 0: a free call is not read as an older edge', () => {
    const free: UsageFields = {
      ...typicalEvent(),
      listCostNanoUsd: 0n,
      creditsChargedMicrocredits: 0n,
      fairUseMicrocredits: 0n,
    };
    const bytes = encodeUsageEvent(free, EVENT_ID);
    expect(hex(bytes)).toBe(hex(reference(free)));
    const decoded = fromBinary(UsageEventSchema, bytes);
    expect(decoded.listCostNanoUsd).toBe(0n);
    expect(decoded.creditsChargedMicrocredits).toBe(0n);
    expect(decoded.fairUseMicrocredits).toBe(0n);
    const paidFields: UsageFields = { ...free, listCostNanoUsd: 123_000n, creditsChargedMicrocredits: 123_000n };
    const paid = fromBinary(UsageEventSchema, encodeUsageEvent(paidFields, EVENT_ID));
    expect(paid.listCostNanoUsd).toBe(123_000n);
    expect(paid.creditsChargedMicrocredits).toBe(123_000n);
    expect(fromBinary(UsageEventSchema, encodeUsageEvent(typicalEvent(), EVENT_ID)).listCostNanoUsd).toBeUndefined();
  });

  it('matches toBinary on 2,000 events generated from the schema (unicode, long strings, int64 extremes)', () => {
    const next = rng(0x5bc);
    for (let i = 0; i < 2_000; i++) {
      const { fields, eventId } = randomEvent(next);
      const ours = hex(encodeUsageEvent(fields, eventId));
      const theirs = hex(reference(fields, eventId));
      if (ours !== theirs)
        throw new Error(`event ${i} differs from toBinary: ${describeDifference(ours, theirs, fields)}`);
    }
  });

  it('returns bytes of its own: a later event does not overwrite an earlier one', () => {
    const first = encodeUsageEvent(typicalEvent(), EVENT_ID);
    const copy = hex(first);
    encodeUsageEvent({ ...typicalEvent(), requestId: 'req_other', keyLabel: 'x'.repeat(4000) }, 'evt_other');
    expect(hex(first)).toBe(copy);
  });

  it('writes every string storable: a NUL or lone surrogate from a caller never reaches the ledger', () => {
    const poisoned: UsageFields = {
      ...typicalEvent(),
      model: 'x\u0000y',
      keyLabel: 'bad \uD800 label',
      sessionId: '\u0000',
      orgId: '\uDC00',
    };
    const decoded = fromBinary(UsageEventSchema, encodeUsageEvent(poisoned, EVENT_ID));
    expect(decoded.model).toBe('xy');
    expect(decoded.keyLabel).toBe('bad \uFFFD label');
    expect(decoded.sessionId).toBe('');
    expect(decoded.orgId).toBe('\uFFFD');
  });
});

import { fromBinary } from '@bufbuild/protobuf';
import { createBus, type Bus } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { lineEventIdOf, roundEventIdOf, toolCallEventIdOf, usageEventIdOf } from './line-event-id';
import { createUsageEmitter, type UsageFields } from './usage-events';

const ULID = '01JDQZ4P0F8B7C6D5E4F3G2H1N';
const OTHER_ULID = '01JDQZ4P0F8B7C6D5E4F3G2H1P';
const LINE = `batch_req_${ULID}_7`;
const batchKey = { batchId: `batch_${ULID}` };
const userKey = { batchId: undefined };

describe('lineEventIdOf: whose request id may be a usage event id', () => {
  it("a key minted for a batch: a line of that batch is the call's event id", () => {
    expect(lineEventIdOf(batchKey, LINE)).toBe(LINE);
    expect(lineEventIdOf(batchKey, `batch_req_${ULID}_1`)).toBe(`batch_req_${ULID}_1`);
    expect(lineEventIdOf(batchKey, `batch_req_${ULID}_100000`)).toBe(`batch_req_${ULID}_100000`);
    const messages = { batchId: `msgbatch_${ULID}` };
    expect(lineEventIdOf(messages, `msgbatch_req_${ULID}_3`)).toBe(`msgbatch_req_${ULID}_3`);
  });

  it('any other key, session or device token never chooses its event id, however line-like its request id', () => {
    expect(lineEventIdOf(userKey, LINE)).toBeUndefined();
    expect(lineEventIdOf({ batchId: '' }, LINE)).toBeUndefined();
    expect(lineEventIdOf(undefined, LINE)).toBeUndefined();
  });

  it("a batch key sending another batch's line, or another kind's, is not believed", () => {
    expect(lineEventIdOf(batchKey, `batch_req_${OTHER_ULID}_7`)).toBeUndefined();
    expect(lineEventIdOf(batchKey, `msgbatch_req_${ULID}_7`)).toBeUndefined();
    expect(lineEventIdOf({ batchId: `msgbatch_${ULID}` }, LINE)).toBeUndefined();
  });

  it.each([
    ['a request id of its own', 'req_01JDQZ4P0F8B7C6D5E4F3G2H1N'],
    ['the batch id itself', `batch_${ULID}`],
    ['no line number', `batch_req_${ULID}`],
    ['line 0', `batch_req_${ULID}_0`],
    ['a leading zero', `batch_req_${ULID}_07`],
    ['a line past 100,000 lines', `batch_req_${ULID}_1000000`],
    ['a lower-case ULID', `batch_req_${ULID.toLowerCase()}_7`],
    ['a ULID with a letter Crockford leaves out', `batch_req_${ULID.slice(0, -1)}U_7`],
    ['a short ULID', `batch_req_${ULID.slice(1)}_7`],
    ['text after the line', `${LINE}x`],
    ['a second line number', `${LINE}_8`],
    ['a newline after the line', `${LINE}\n`],
    ['a repeat of the line', `${LINE}${LINE}`],
  ])('a batch key with %s is not believed', (_case, requestId) => {
    expect(lineEventIdOf(batchKey, requestId)).toBeUndefined();
  });
});

describe('usageEventIdOf: which outcome takes the line id', () => {
  it("an answered (2xx) line call is billed under its line's id", () => {
    expect(usageEventIdOf(LINE, 200)).toBe(LINE);
  });

  it.each([429, 499, 500, 502, 403])('a line call ending %i has an event id of its own', (status) => {
    expect(usageEventIdOf(LINE, status)).toMatch(/^evt_[0-9A-Z]{26}$/);
  });

  it('a call with no line has a fresh event id each time', () => {
    const first = usageEventIdOf(undefined, 200);
    expect(first).toMatch(/^evt_[0-9A-Z]{26}$/);
    expect(usageEventIdOf(undefined, 200)).not.toBe(first);
  });
});

describe("a batch line's MCP rounds and tool calls: event ids made from the line's id", () => {
  it('the same round and tool call of the same line have the same id, every time the line is called', () => {
    expect(roundEventIdOf(LINE, 1)).toBe(`${LINE}_r1`);
    expect(roundEventIdOf(LINE, 1)).toBe(roundEventIdOf(LINE, 1));
    expect(toolCallEventIdOf(LINE, 2, 0)).toBe(`${LINE}_r2_t0`);
    expect(toolCallEventIdOf(LINE, 2, 0)).toBe(toolCallEventIdOf(LINE, 2, 0));
  });

  it("no two rounds, tool calls or lines share an id, and none is a line's id or the edge's own", () => {
    const lines = [LINE, `batch_req_${ULID}_8`, `batch_req_${ULID}_71`, `msgbatch_req_${ULID}_7`];
    const ids = lines.flatMap((line) => [
      line,
      ...[1, 2, 11].flatMap((round) => [
        roundEventIdOf(line, round),
        ...[0, 1, 10].map((index) => toolCallEventIdOf(line, round, index)),
      ]),
    ]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.filter((id) => !lines.includes(id))) {
      // A batch key sending one of them as its request id is not believed: it names no line.
      expect(lineEventIdOf(batchKey, id)).toBeUndefined();
      expect(id).not.toMatch(/^evt_/);
    }
  });

  it('a round answered is billed under its id; a round that failed has a fresh one', () => {
    expect(usageEventIdOf(roundEventIdOf(LINE, 1), 200)).toBe(`${LINE}_r1`);
    expect(usageEventIdOf(roundEventIdOf(LINE, 1), 429)).toMatch(/^evt_/);
  });
});

describe('the usage emitter', () => {
  const logger = createLogger({ service: 'line-event-id-test', level: 'silent' });
  let bus: Bus;
  let eventIds: string[];
  const fields = (status: number): UsageFields => ({
    requestId: LINE,
    accountId: 'usr_line',
    userId: 'usr_line',
    keyId: 'key_line',
    model: 'house',
    upstreamModel: 'sim-large',
    upstream: 'house',
    provider: 'house',
    dialectIn: 'chat',
    dialectOut: 'openai',
    route: 'auto',
    inputTokens: 10n,
    outputTokens: 5n,
    cacheReadTokens: 0n,
    cacheWriteTokens: 0n,
    reasoningTokens: 0n,
    isByok: false,
    status,
    latencyMs: 1n,
    ttftMs: 1n,
    stream: false,
    keyLabel: 'batch',
    servedBy: 'house',
    attempts: 1,
    cacheHit: false,
    guardrailId: '',
    guardrailAction: '',
    atMs: 0,
  });

  beforeEach(async () => {
    bus = createBus({ clientId: 'line-event-id-test', logger });
    eventIds = [];
    await bus.consumer.subscribe({
      topic: USAGE_EVENTS_TOPIC,
      groupId: 'line-event-id-test',
      fromBeginning: true,
      handler: async (message) => void eventIds.push(fromBinary(UsageEventSchema, message.value).eventId),
    });
  });

  afterEach(() => bus.close());

  it("sends a batch line's answered call twice under one event id, and any other call under fresh ones", async () => {
    const emitter = createUsageEmitter({ producer: bus.producer, logger });
    await emitter.emit(fields(200), lineEventIdOf(batchKey, LINE));
    await emitter.emit(fields(200), lineEventIdOf(batchKey, LINE));
    await emitter.emit(fields(200), lineEventIdOf(userKey, LINE));
    await emitter.emit(fields(200), lineEventIdOf(userKey, LINE));
    await emitter.emit(fields(429), lineEventIdOf(batchKey, LINE));
    await bus.producer.flush();
    expect(eventIds).toHaveLength(5);
    expect(eventIds.slice(0, 2)).toEqual([LINE, LINE]);
    expect(new Set(eventIds.slice(2)).size).toBe(3);
    for (const id of eventIds.slice(2)) expect(id).toMatch(/^evt_/);
  });

  it("sends a batch line's earlier MCP round twice under one event id", async () => {
    const emitter = createUsageEmitter({ producer: bus.producer, logger });
    const round = roundEventIdOf(LINE, 1);
    await emitter.emit(fields(200), round);
    await emitter.emit(fields(200), round);
    await bus.producer.flush();
    expect(eventIds).toEqual([round, round]);
  });
});

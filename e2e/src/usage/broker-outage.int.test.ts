import { mkdtempSync, rmSync } from 'node:fs';
import { fromBinary } from '@bufbuild/protobuf';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInProcessBus, createKafkaEventProducer, type Bus } from '@sbc/bus';
import { FakeKafkaCluster } from '@sbc/bus/testing';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { testBackends } from '@sbc/testing';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { OWNER_KEY as KEY, simHouse, startStack, type Stack } from '../support/stack';

// Finding 2 of issue 53: a Kafka outage must not become an API outage. An edge over a broker that is down (the
// fake kafkajs cluster, behind the real producer and spool) stays ready while its spool has room; near the spool's
// bound it refuses only billable calls, 503 usage_unrecordable in the caller's dialect with retry-after; other
// routes are served throughout; once the broker is back, every call it answered is billed exactly once.

let stack: Stack;
let edge: RunningGateway;
let spoolRoot: string;
/** The edge's log lines, parsed. */
const edgeLines: { level: number; msg: string }[] = [];
const edgeLog = { write: (line: string) => void edgeLines.push(JSON.parse(line)) };
const cluster = new FakeKafkaCluster();

/** The edge's bus: the real Kafka producer and spool over the fake cluster. */
function spoolingBus(): Bus {
  const producer = createKafkaEventProducer(cluster.client(), {
    spool: { dir: spoolRoot, spoolAfterMs: 100, maxBytes: 40_000, leaseMs: 3_000 },
    lingerMs: 1,
    maxBuffered: 5,
    retry: { initialMs: 50, maxMs: 500 },
    logger: createLogger({ service: 'broker-outage-test', level: 'silent' }),
  });
  const { consumer } = createInProcessBus();
  return { producer, consumer, kind: 'kafka', close: () => producer.close() };
}

beforeAll(async () => {
  spoolRoot = mkdtempSync(path.join(tmpdir(), 'sbc-outage-spool-'));
  stack = await startStack({ label: 'broker_outage', house: simHouse });
  edge = await startGateway(
    loadGatewayConfig({
      PORT: '0',
      BASE_URL: 'https://gw.test',
      ACCOUNT_GRPC_TARGET: stack.account.grpcAddress,
      REDIS_URL: testBackends().redisUrl,
      HOUSE_ENGINES: JSON.stringify(simHouse(stack.sim.url)),
      LOG_LEVEL: 'silent',
      // Before issue 53 the edge turned unready past this many pending events; it is no longer read.
      USAGE_PENDING_READY_MAX: '3',
      USAGE_SPOOL_SHED_AT_PERCENT: '10',
    }),
    { bus: spoolingBus(), logger: createLogger({ service: 'gateway', level: 'info', destination: edgeLog }) },
  );
}, 60_000);

afterAll(async () => {
  cluster.bringUp();
  await edge?.stop();
  await stack?.stop();
  rmSync(spoolRoot, { recursive: true, force: true });
});

const ready = async () => (await fetch(`${edge.url}/readyz`)).status;
const chat = (content: string) =>
  fetch(`${edge.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'house', messages: [{ role: 'user', content }] }),
  });
/** Answered calls billed: distinct event ids (the ledger's key) of events with status 200. */
const billedEvents = () =>
  new Set(
    cluster.log
      .map((record) => fromBinary(UsageEventSchema, record.value))
      .filter((event) => event.status === 200)
      .map((event) => event.eventId),
  ).size;

describe('a broker outage at the edge', () => {
  it('keeps the edge ready; near the spool bound only billable calls are refused, in their dialect', async () => {
    cluster.takeDown();
    let answered = 0;
    let shed: Response | undefined;
    for (let i = 0; i < 200 && !shed; i++) {
      const reply = await chat(`call ${i}`);
      if (reply.status === 200) answered++;
      else shed = reply;
      if (i === 5) expect(await ready()).toBe(200); // past the old pending threshold, still ready
      if (!shed) await new Promise((resolve) => setTimeout(resolve, 30)); // the gate looks every 250 ms
    }
    expect(answered).toBeGreaterThan(5);
    expect(shed?.status).toBe(503);
    expect(shed?.headers.get('retry-after')).toBe('30');
    expect(await shed!.json()).toMatchObject({
      error: { code: 'usage_unrecordable', message: expect.stringContaining('cannot record usage') },
    });
    // The Messages dialect gets its own error shape.
    const messages = await fetch(`${edge.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'house-omni', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(messages.status).toBe(503);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    // Still ready, and routes that bill nothing are served.
    expect(await ready()).toBe(200);
    const whoami = await fetch(`${edge.url}/v1/keys/whoami`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(whoami.status).toBe(200);
    const metrics = await (await fetch(`${edge.url}/metrics`)).text();
    expect(metrics).toMatch(/^sbc_usage_calls_shed\{[^}]*\} [1-9]/m);
    expect(metrics).toMatch(/^sbc_usage_spool_active\{[^}]*\} 1$/m);
    // Shed calls are counted by that metric, not logged one error line each through the outage.
    expect(edgeLines.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);

    // The broker is back: the spool drains, calls are taken again, and every answered call is billed once.
    cluster.bringUp();
    for (const deadline = Date.now() + 20_000; billedEvents() < answered && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(billedEvents()).toBe(answered);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await chat('after')).status).toBe(200);
  }, 120_000);
});

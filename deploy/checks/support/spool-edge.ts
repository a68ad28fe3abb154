import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { createBus } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';

// The edge's usage producer with its spool, as a process the real-broker suite can kill with SIGKILL: sends
// EDGE_COUNT events from EDGE_FROM, one after another, and prints `acked <event id>` once each is durable (acked by
// the broker or fsync'd to the spool): what a caller's reply waits for. Exits 0 once all are sent and flushed.

const env = process.env;
const bus = createBus({
  kafkaBrokers: env.EDGE_BROKERS!.split(','),
  clientId: 'durability-edge-process',
  logger: createLogger({ service: 'spool-edge', level: 'warn' }),
  topicPrefix: env.EDGE_PREFIX,
  outboxDir: env.EDGE_SPOOL,
  spoolAfterMs: 500,
  maxBuffered: 200,
  spool: { leaseMs: 3_000 },
});

async function main(): Promise<void> {
  const from = Number(env.EDGE_FROM);
  const durable: Promise<void>[] = [];
  for (let i = from; i < from + Number(env.EDGE_COUNT); i++) {
    const eventId = `evt_edge_${i}`;
    const accountId = `acct_${i % 37}`;
    const event = create(UsageEventSchema, {
      eventId,
      requestId: `req_${eventId}`,
      accountId,
      model: 'house',
      status: 200,
      creditsCharged: 1,
      outputTokens: 10n,
      ts: timestampFromMs(Date.now()),
    });
    const sent = bus.producer.sendDurable(USAGE_EVENTS_TOPIC, {
      key: accountId,
      value: toBinary(UsageEventSchema, event),
    });
    durable.push(sent.then(() => void process.stdout.write(`acked ${eventId}\n`)));
    if (i % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(durable);
  // Wait out a lease so this process also adopts (and sends) the spool of the one killed before it.
  await new Promise((resolve) => setTimeout(resolve, 8_000));
  await bus.producer.flush();
  await bus.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);

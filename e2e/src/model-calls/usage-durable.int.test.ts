import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { createBatchingProducer, createInProcessBus, type Bus, type QueuedMessage } from '@sbc/bus';
import { testBackends } from '@sbc/testing';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { OWNER_KEY as KEY, simHouse, startStack, type Stack } from '../support/stack';

/**
 * A call's usage event is durable before the caller receives the last bytes of its reply (ARCHITECTURE,
 * "Runtime modes"): with a broker that holds its acks, a reply's end waits for the ack, streamed or not, and
 * arrives once the broker acks.
 */
let stack: Stack;
let edge: RunningGateway;
const acks: Array<{ messages: readonly QueuedMessage[]; ack: () => void }> = [];

/** A Kafka stand-in for the producer: each batch waits until the test acks it. */
function heldBroker(): Bus {
  const producer = createBatchingProducer(
    (messages) => new Promise<void>((resolve) => acks.push({ messages, ack: resolve })),
    { lingerMs: 0 },
  );
  const { consumer } = createInProcessBus();
  return { producer, consumer, kind: 'kafka', close: async () => undefined };
}

beforeAll(async () => {
  stack = await startStack({ label: 'usage_durable', house: simHouse });
  edge = await startGateway(
    loadGatewayConfig({
      PORT: '0',
      BASE_URL: 'https://gw.test',
      ACCOUNT_GRPC_TARGET: stack.account.grpcAddress,
      REDIS_URL: testBackends().redisUrl,
      HOUSE_ENGINES: JSON.stringify(simHouse(stack.sim.url)),
      LOG_LEVEL: 'silent',
    }),
    { bus: heldBroker() },
  );
}, 60_000);

afterAll(async () => {
  for (const held of acks) held.ack();
  await edge?.stop();
  await stack?.stop();
});

/** Sends one call and reports whether its body has ended, and the body when it has. */
function call(body: Record<string, unknown>) {
  const state = { ended: false, text: '' };
  const req = request(`${edge.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  });
  req.end(JSON.stringify(body));
  const done = (async () => {
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.setEncoding('utf8');
    for await (const chunk of res) state.text += chunk;
    state.ended = true;
  })();
  return { state, done };
}

async function waitForAcks(count: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (acks.length < count) {
    if (Date.now() > deadline) throw new Error(`${acks.length} of ${count} batches reached the broker`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it('a non-streamed reply is not sent until its usage event is acked', async () => {
  const { state, done } = call({ model: 'house', max_tokens: 5, messages: [{ role: 'user', content: 'hello' }] });
  await waitForAcks(1);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(state.ended).toBe(false);
  acks[0]!.ack();
  await done;
  expect(JSON.parse(state.text)).toMatchObject({ object: 'chat.completion' });
});

it("a stream's terminator is held until its usage event is acked; the tokens before it are not", async () => {
  const { state, done } = call({
    model: 'house',
    max_tokens: 5,
    stream: true,
    messages: [{ role: 'user', content: 'hello' }],
  });
  await waitForAcks(2);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(state.ended).toBe(false);
  expect(state.text).toContain('chat.completion.chunk');
  expect(state.text).not.toContain('[DONE]');
  acks[1]!.ack();
  await done;
  expect(state.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
});

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { newId } from '@sbc/ids';
import { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadRunsConfig, start } from '../main';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('resending a failed webhook delivery over gRPC', () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  let client: RpcClientOf<typeof RunsService>;
  let receiver: Server;
  let origin: string;
  const received: Received[] = [];
  /** What the receiver answers next, by path. */
  const answers: Record<string, number> = { '/ok': 204, '/down': 503 };
  const owner = 'usr_resend_owner';

  beforeAll(async () => {
    db = await createTestDatabase('runs_resend');
    running = await start(
      loadRunsConfig({
        RUNS_GRPC_PORT: '0',
        RUNS_HTTP_PORT: '0',
        RUNS_WORKERS: '0',
        RUNS_WEBHOOK_POLL_MS: '50',
        RUNS_WEBHOOK_RETRY_SCHEDULE_MS: '100',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'silent',
      }),
    );
    client = createRpcClient(RunsService, { target: running.grpcAddress });
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(answers[req.url ?? ''] ?? 404).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    client?.close();
    await running?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
    await db?.drop();
  });

  /** An endpoint (on loopback, so registered by an operator) and a delivery to it that ran out of retries. */
  async function failedDelivery(path: string, accountId = owner) {
    const created = await client.createWebhook({
      userId: accountId,
      url: `${origin}${path}`,
      events: ['run.succeeded'],
      operator: true,
    });
    const prisma = running.database.prisma;
    const projectId = (await client.createProject({ userId: accountId, name: 'hooks' })).project!.id;
    const runId = newId('run');
    await prisma.run.create({
      data: { id: runId, accountId, projectId, status: 'succeeded', model: 'house', prompt: 'p', caller: {} },
    });
    const event = await prisma.webhookEvent.create({
      data: {
        id: newId('evt'),
        accountId,
        runId,
        type: 'run.succeeded',
        payload: JSON.stringify({ type: 'run.succeeded', data: { run_id: runId } }),
      },
    });
    const delivery = await prisma.webhookDelivery.create({
      data: { id: newId('msg'), eventId: event.id, endpointId: created.endpoint!.id, status: 'failed', attempts: 2 },
    });
    await prisma.webhookAttempt.createMany({
      data: [1, 2].map((attempt) => ({ deliveryId: delivery.id, attempt, statusCode: 500, durationMs: 3 })),
    });
    return { webhookId: created.endpoint!.id, secret: created.secret, event, deliveryId: delivery.id };
  }

  const deliveryOf = async (accountId: string, webhookId: string, deliveryId: string) =>
    (await client.listWebhookDeliveries({ userId: accountId, webhookId, limit: 100 })).deliveries.find(
      (delivery) => delivery.id === deliveryId,
    )!;

  it('sends the same event again with a fresh, valid signature and records it as the next attempt', async () => {
    const target = await failedDelivery('/ok');
    const resentAt = Math.floor(Date.now() / 1000);
    const reply = await client.resendWebhookDelivery({ userId: owner, ...target });
    expect(reply.delivery).toMatchObject({ id: target.deliveryId, status: 'pending' });
    expect(reply.delivery!.attempts.map((attempt) => attempt.attempt)).toEqual([1, 2]);

    const delivered = await eventually(
      () => deliveryOf(owner, target.webhookId, target.deliveryId),
      (delivery) => delivery.status === 'succeeded',
    );
    expect(delivered.attempts.map((attempt) => [attempt.attempt, attempt.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 204],
    ]);
    const sent = received.filter((item) => item.headers['webhook-id'] === target.event.id);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toBe(target.event.payload);
    expect(Number(sent[0]!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(resentAt);
    const headers = Object.fromEntries(Object.entries(sent[0]!.headers).map(([name, value]) => [name, String(value)]));
    expect(new Webhook(target.secret).verify(sent[0]!.body, headers)).toMatchObject({ type: 'run.succeeded' });

    // Delivered now: a second resend is refused.
    await expect(client.resendWebhookDelivery({ userId: owner, ...target })).rejects.toMatchObject({
      code: 'conflict',
      param: 'delivery_id',
    });
  });

  it('fails the delivery again after one refused attempt, without retrying it on the schedule', async () => {
    const target = await failedDelivery('/down');
    await client.resendWebhookDelivery({ userId: owner, ...target });
    const failed = await eventually(
      () => deliveryOf(owner, target.webhookId, target.deliveryId),
      (delivery) => delivery.status === 'failed' && delivery.attempts.length === 3,
    );
    expect(failed.attempts.at(-1)).toMatchObject({ attempt: 3, statusCode: 503 });
    // Longer than the retry schedule's 100 ms: nothing more is sent.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received.filter((item) => item.headers['webhook-id'] === target.event.id)).toHaveLength(1);
  });

  it('queues one attempt when two resends race, and refuses the other as a conflict', async () => {
    answers['/slow-ok'] = 204;
    const target = await failedDelivery('/slow-ok');
    const outcomes = await Promise.allSettled([
      client.resendWebhookDelivery({ userId: owner, ...target }),
      client.resendWebhookDelivery({ userId: owner, ...target }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.find((outcome) => outcome.status === 'rejected')).toMatchObject({
      reason: { code: 'conflict' },
    });
    await eventually(
      () => deliveryOf(owner, target.webhookId, target.deliveryId),
      (delivery) => delivery.status === 'succeeded',
    );
    expect(received.filter((item) => item.headers['webhook-id'] === target.event.id)).toHaveLength(1);
  });

  it("answers not_found for another account's webhook, an unknown delivery, or one of another endpoint", async () => {
    const target = await failedDelivery('/ok');
    await expect(client.resendWebhookDelivery({ userId: 'usr_resend_other', ...target })).rejects.toMatchObject({
      code: 'not_found',
      param: 'webhook_id',
    });
    await expect(
      client.resendWebhookDelivery({ userId: owner, webhookId: target.webhookId, deliveryId: newId('msg') }),
    ).rejects.toMatchObject({ code: 'not_found', param: 'delivery_id' });
    const elsewhere = await failedDelivery('/ok');
    await expect(
      client.resendWebhookDelivery({ userId: owner, webhookId: elsewhere.webhookId, deliveryId: target.deliveryId }),
    ).rejects.toMatchObject({ code: 'not_found', param: 'delivery_id' });
    expect((await deliveryOf(owner, target.webhookId, target.deliveryId)).status).toBe('failed');
  });

  it('refuses a delivery of a disabled endpoint as a conflict', async () => {
    const target = await failedDelivery('/ok');
    await running.database.prisma.webhookEndpoint.update({
      where: { id: target.webhookId },
      data: { disabledAt: new Date(), disabledReason: 'The endpoint answered 410 Gone.' },
    });
    await expect(client.resendWebhookDelivery({ userId: owner, ...target })).rejects.toMatchObject({
      code: 'conflict',
      param: 'webhook_id',
    });
  });
});

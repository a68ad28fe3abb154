import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { SCOPES } from '@sbc/scopes';
import { readEventStream, SIM_TOKENS_PER_SECOND, type SseFrame } from '../support/run-events';
import { OWNER_KEY, startStack, type RunsStack } from '../support/stack';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver: `/ok` answers 204, `/flaky` 500 twice then 200, `/gone` 410. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  let flaky = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/gone') res.writeHead(410).end();
      else if (req.url === '/flaky') res.writeHead(++flaky <= 2 ? 500 : 200).end();
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function eventually<T>(
  read: () => Promise<T> | T,
  accept: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const payloadOf = (delivery: Received) =>
  JSON.parse(delivery.body) as { type: string; data: { run_id: string; status: string } };
const headersOf = (delivery: Received) =>
  Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]));

describe('runs: projects, runs from start to settle, resumable event streams, cancel, signed webhooks', () => {
  let stack: RunsStack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let projectId: string;

  beforeAll(async () => {
    // A fast retry ladder, so retries are observed in well under a second.
    stack = await startStack({
      label: 'runs_api',
      simTokensPerSecond: SIM_TOKENS_PER_SECOND,
      runs: { env: { RUNS_WEBHOOK_RETRY_SCHEDULE_MS: '150,150,150,150,150,150,150' } },
    });
    receiver = await startReceiver();
    projectId = await stack.createProject({ name: 'main', instructions: 'Be brief.' });
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  const api = (...args: Parameters<RunsStack['api']>) => stack.api(...args);
  const eventsUrl = (runId: string, query = '') => `${stack.edge.url}/v1/runs/${runId}/events${query}`;
  const startRun = async (body: Record<string, unknown>, options: { key?: string; idempotencyKey?: string } = {}) => {
    const res = await api('POST', '/v1/runs', {
      key: options.key ?? OWNER_KEY,
      body: { project_id: projectId, ...body },
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {},
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; status: string };
  };
  const followToEnd = (runId: string, lastEventId?: string) =>
    readEventStream(eventsUrl(runId), { key: OWNER_KEY, lastEventId });
  const registerWebhook = async (path: string, key = OWNER_KEY, events?: string[]) => {
    const res = await api('POST', '/v1/webhooks', {
      key,
      body: { url: `${receiver.url}${path}`, ...(events ? { events } : {}) },
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };

  describe('projects', () => {
    it(
      'are created, listed newest first in pages, read, updated ' +
        '(null clears) and deleted; other accounts see none',
      async () => {
        const a = await stack.createProject({ name: 'alpha', default_model: 'house' });
        const b = await stack.createProject({ name: 'beta' });
        const page = await api('GET', '/v1/projects?limit=1', { key: OWNER_KEY });
        expect(page.body).toMatchObject({
          object: 'list',
          data: [{ id: b, name: 'beta' }],
          has_more: true,
          first_id: b,
          last_id: b,
        });
        expect((await api('GET', `/v1/projects?limit=1&after_id=${b}`, { key: OWNER_KEY })).body.data[0].id).toBe(a);

        const updated = await api('PATCH', `/v1/projects/${a}`, {
          key: OWNER_KEY,
          body: { name: 'alpha 2', default_model: null, instructions: 'Use tools.' },
        });
        expect(updated.status).toBe(200);
        expect(updated.body).toMatchObject({ id: a, object: 'project', name: 'alpha 2', instructions: 'Use tools.' });
        expect(updated.body.default_model).toBeUndefined();

        const stranger = await stack.seedKey({ userId: await stack.seedUser() });
        expect((await api('GET', `/v1/projects/${a}`, { key: stranger.secret })).status).toBe(404);
        expect((await api('DELETE', `/v1/projects/${a}`, { key: OWNER_KEY })).body).toMatchObject({
          id: a,
          object: 'project',
          deleted: true,
        });
        expect((await api('GET', `/v1/projects/${a}`, { key: OWNER_KEY })).body).toMatchObject({ error: 'not_found' });
        const bad = await api('POST', '/v1/projects', { key: OWNER_KEY, body: { name: '' } });
        expect(bad.status).toBe(400);
        expect(bad.body).toMatchObject({ error: 'invalid_request', param: 'name' });
      },
    );
  });

  describe('a run from start to settle', () => {
    let runId: string;
    let webhookSecret: string;
    let fullStream: SseFrame[];

    it(
      'follows its events live, resumes with Last-Event-ID after a disconnect without loss or repeat, and sends one ' +
        'signed run.succeeded',
      async () => {
        webhookSecret = (await registerWebhook('/ok')).secret;
        expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
        const run = await startRun(
          { prompt: 'sim:tool what is in the workspace?', metadata: { ticket: 'T-1' } },
          { idempotencyKey: 'first-run' },
        );
        runId = run.id;
        expect(run).toMatchObject({ object: 'run', status: 'queued', model: 'house', metadata: { ticket: 'T-1' } });

        // A client that goes away after three events, then comes back with the last id it saw.
        const first = await readEventStream(eventsUrl(runId), {
          key: OWNER_KEY,
          until: (_frame, frames) => frames.length === 3,
        });
        expect(first.status).toBe(200);
        expect(first.contentType).toContain('text/event-stream');
        expect(first.ended).toBe(false);
        const second = await followToEnd(runId, first.frames.at(-1)!.id);
        expect(second.ended).toBe(true);
        fullStream = [...first.frames, ...second.frames];

        expect(fullStream.map((frame) => Number(frame.id))).toEqual(fullStream.map((_frame, index) => index + 1));
        const types = fullStream.map((frame) => frame.event);
        expect(types.slice(0, 2)).toEqual(['run.queued', 'run.started']);
        expect(types.at(-1)).toBe('run.succeeded');
        expect(types).toEqual(expect.arrayContaining(['tool.call', 'tool.result', 'message.delta']));
        const call = JSON.parse(fullStream.find((frame) => frame.event === 'tool.call')!.data);
        expect(call).toMatchObject({
          object: 'run.event',
          run_id: runId,
          type: 'tool.call',
          data: { name: 'list_files', step: 1 },
        });
        expect(JSON.parse(fullStream.find((frame) => frame.event === 'tool.result')!.data).data).toMatchObject({
          name: 'list_files',
          ok: true,
        });

        const settled = await api('GET', `/v1/runs/${runId}`, { key: OWNER_KEY });
        const deltas = fullStream
          .filter((frame) => frame.event === 'message.delta')
          .map((frame) => JSON.parse(frame.data).data.text as string);
        expect(settled.body).toMatchObject({
          status: 'succeeded',
          output: deltas.join(''),
          usage: { steps: 2, model_calls: 2, tool_calls: 1 },
        });
        expect(settled.body.output).toMatch(/^Simulated reply using the tool result/);
        expect(settled.body.usage.output_tokens).toBeGreaterThan(0);
        expect(settled.body.settled_at).toEqual(expect.any(String));

        const deliveries = await eventually(
          () =>
            receiver.received.filter(
              (delivery) => delivery.path === '/ok' && payloadOf(delivery).data.run_id === runId,
            ),
          (found) => found.length > 0,
        );
        // Nothing else arrives for the run: one settle, one delivery.
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect(
          receiver.received.filter((delivery) => delivery.path === '/ok' && payloadOf(delivery).data.run_id === runId),
        ).toHaveLength(1);
        const verified = new Webhook(webhookSecret).verify(deliveries[0]!.body, headersOf(deliveries[0]!)) as {
          type: string;
          data: unknown;
        };
        expect(verified).toMatchObject({
          type: 'run.succeeded',
          data: { run_id: runId, project_id: projectId, status: 'succeeded' },
        });
        expect(deliveries[0]!.headers['webhook-id']).toMatch(/^evt_/);
        expect(() => new Webhook(webhookSecret).verify(`${deliveries[0]!.body} `, headersOf(deliveries[0]!))).toThrow();
      },
    );

    it('resumed at every sequence number, the stream is exactly the rest of the whole stream', async () => {
      for (let n = 0; n <= fullStream.length; n++) {
        const resumed =
          n % 2 === 0
            ? await followToEnd(runId, String(n))
            : await readEventStream(eventsUrl(runId, `?after=${n}`), { key: OWNER_KEY });
        expect({ n, frames: resumed.frames }).toEqual({ n, frames: fullStream.slice(n) });
      }
    });

    it('pages the same events as JSON for Accept: application/json', async () => {
      const page = await api('GET', `/v1/runs/${runId}/events?after=1&limit=2`, {
        key: OWNER_KEY,
        headers: { accept: 'application/json' },
      });
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ object: 'list', has_more: true, next_after: 3 });
      expect(page.body.data).toEqual(fullStream.slice(1, 3).map((frame) => JSON.parse(frame.data)));
      const all = await api('GET', `/v1/runs/${runId}/events`, {
        key: OWNER_KEY,
        headers: { accept: 'application/json' },
      });
      expect(all.body.data).toHaveLength(fullStream.length);
      expect(all.body.has_more).toBe(false);
    });

    it('replays the run for a repeated idempotency-key, and refuses the key with a different body', async () => {
      const again = await api('POST', '/v1/runs', {
        key: OWNER_KEY,
        body: { project_id: projectId, prompt: 'sim:tool what is in the workspace?', metadata: { ticket: 'T-1' } },
        headers: { 'idempotency-key': 'first-run' },
      });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: runId, status: 'succeeded' });
      const clash = await api('POST', '/v1/runs', {
        key: OWNER_KEY,
        body: { project_id: projectId, prompt: 'something else' },
        headers: { 'idempotency-key': 'first-run' },
      });
      expect(clash.status).toBe(409);
      expect(clash.body).toMatchObject({ error: 'conflict' });
    });

    it(
      'made its model calls with a key of its own, holding ' + 'only gateway:invoke, revoked once the run settled',
      async () => {
        const keys = await stack.account.database.prisma.callerKey.findMany({ where: { name: `run ${runId}` } });
        expect(keys).toHaveLength(1);
        expect(keys[0]).toMatchObject({ scopes: ['gateway:invoke'], revokedAt: expect.any(Date) });
        expect(keys[0]!.lastUsedAt).not.toBeNull();
      },
    );

    it('lists runs newest first, filtered by project and status; refuses a cancel once settled (409)', async () => {
      const list = await api('GET', `/v1/runs?project_id=${projectId}&status=succeeded`, { key: OWNER_KEY });
      expect(list.body.data.map((run: { id: string }) => run.id)).toContain(runId);
      expect(list.body.data.every((run: { status: string }) => run.status === 'succeeded')).toBe(true);
      const cancel = await api('POST', `/v1/runs/${runId}/cancel`, { key: OWNER_KEY });
      expect(cancel.status).toBe(409);
      expect(cancel.body).toMatchObject({ error: 'conflict' });
    });
  });

  describe('event streams', () => {
    it('hand over from stored to live events at every point of a live run without gap or repeat', async () => {
      const run = await startRun({ prompt: 'count for me sim-tokens:150' });
      // One event per connection, each resumed from the last id: every hand-off point is crossed live.
      const pieces: SseFrame[] = [];
      let last = '0';
      while (pieces.at(-1)?.event !== 'run.succeeded') {
        const { frames } = await readEventStream(eventsUrl(run.id), {
          key: OWNER_KEY,
          lastEventId: last,
          until: () => true,
        });
        expect(frames).toHaveLength(1);
        pieces.push(frames[0]!);
        last = frames[0]!.id!;
      }
      expect(pieces).toEqual((await followToEnd(run.id)).frames);
      expect(pieces.filter((frame) => frame.event === 'message.delta').length).toBeGreaterThan(1);
    });

    it('refuse a malformed Last-Event-ID (400) and an unknown or foreign run (404)', async () => {
      const run = await startRun({ prompt: 'hello' });
      const bad = await fetch(eventsUrl(run.id), {
        headers: { authorization: `Bearer ${OWNER_KEY}`, 'last-event-id': 'seven' },
      });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ error: 'invalid_request', param: 'last-event-id' });
      const stranger = await stack.seedKey({ userId: await stack.seedUser() });
      expect((await readEventStream(eventsUrl(run.id), { key: stranger.secret })).status).toBe(404);
      const unknown = await api('GET', '/v1/runs/run_01JZZZZZZZZZZZZZZZZZZZZZZZ/events', {
        key: OWNER_KEY,
        headers: { accept: 'application/json' },
      });
      expect(unknown.status).toBe(404);
    });
  });

  describe('cancel', () => {
    it('stops a run mid model call promptly, records run.cancelled, and answers 409 once settled', async () => {
      // 3,000 tokens at the sim's pace would take 30 s.
      const run = await startRun({ prompt: 'write at length sim-tokens:3000' });
      const started = await readEventStream(eventsUrl(run.id), {
        key: OWNER_KEY,
        until: (frame) => frame.event === 'message.delta',
      });
      const askedAt = Date.now();
      const cancel = await api('POST', `/v1/runs/${run.id}/cancel`, { key: OWNER_KEY });
      expect(cancel.status).toBe(202);
      expect(cancel.body).toMatchObject({ id: run.id, status: 'running', cancel_requested_at: expect.any(String) });
      const rest = await followToEnd(run.id, started.frames.at(-1)!.id);
      expect(rest.frames.at(-1)?.event).toBe('run.cancelled');
      expect(Date.now() - askedAt).toBeLessThan(10_000);
      const settled = await api('GET', `/v1/runs/${run.id}`, { key: OWNER_KEY });
      expect(settled.body).toMatchObject({ status: 'cancelled', settled_at: expect.any(String) });
      expect(settled.body.output).toBeUndefined();
      expect((await api('POST', `/v1/runs/${run.id}/cancel`, { key: OWNER_KEY })).status).toBe(409);
    });
  });

  describe('runs stay within their creator', () => {
    it(
      'a run started by a key without gateway:invoke fails: ' + 'its model-call key would be wider than the creator',
      async () => {
        const key = await stack.seedKey({ scopes: SCOPES.filter((scope) => scope !== 'gateway:invoke') });
        const run = await startRun({ prompt: 'hello' }, { key: key.secret });
        const { frames } = await followToEnd(run.id);
        expect(frames.at(-1)?.event).toBe('run.failed');
        const settled = await api('GET', `/v1/runs/${run.id}`, { key: OWNER_KEY });
        expect(settled.body).toMatchObject({ status: 'failed', error: { code: 'insufficient_scope' } });
      },
    );
  });

  describe('webhook deliveries', () => {
    it(
      'retry a failing endpoint on the schedule until it answers, disable an endpoint that answers 410, and show ' +
        'every attempt',
      async () => {
        // The receiver is on loopback, which runs dials for an operator (the owner), not for a tenant.
        const key = OWNER_KEY;
        const project = (await api('POST', '/v1/projects', { key, body: { name: 'hooks' } })).body.id as string;
        const flaky = await registerWebhook('/flaky', key, ['run.succeeded']);
        const gone = await registerWebhook('/gone', key);
        const run = await startRun({ project_id: project, prompt: 'hello' }, { key });
        await followToEnd(run.id);

        const attempts = await eventually(
          () =>
            receiver.received.filter(
              (delivery) => delivery.path === '/flaky' && payloadOf(delivery).data.run_id === run.id,
            ),
          (found) => found.length >= 3,
        );
        expect(attempts).toHaveLength(3);
        // One message, retried: the same webhook-id every time, each attempt signed afresh and verifiable.
        expect(new Set(attempts.map((attempt) => attempt.headers['webhook-id'])).size).toBe(1);
        for (const attempt of attempts)
          expect(new Webhook(flaky.secret).verify(attempt.body, headersOf(attempt))).toMatchObject({
            type: 'run.succeeded',
          });

        const deliveries = await eventually(
          () => api('GET', `/v1/webhooks/${flaky.id}/deliveries`, { key }),
          (res) => res.body.data[0]?.status === 'succeeded',
        );
        expect(deliveries.body.data).toHaveLength(1);
        expect(deliveries.body.data[0]).toMatchObject({
          object: 'webhook_delivery',
          event_type: 'run.succeeded',
          run_id: run.id,
          status: 'succeeded',
        });
        expect(deliveries.body.data[0].attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual(
          [500, 500, 200],
        );

        const endpoints = await eventually(
          () => api('GET', '/v1/webhooks', { key }),
          (res) => res.body.data.find((endpoint: { id: string }) => endpoint.id === gone.id)?.disabled_at !== undefined,
        );
        expect(endpoints.body.data.find((endpoint: { id: string }) => endpoint.id === gone.id)).toMatchObject({
          disabled_at: expect.any(String),
        });
        expect(endpoints.body.data.every((endpoint: Record<string, unknown>) => endpoint.secret === undefined)).toBe(
          true,
        );
        const goneDeliveries = await api('GET', `/v1/webhooks/${gone.id}/deliveries`, { key });
        expect(goneDeliveries.body.data[0]).toMatchObject({
          status: 'failed',
          attempts: [{ attempt: 1, status_code: 410 }],
        });

        // A disabled endpoint gets nothing more.
        const next = await startRun({ project_id: project, prompt: 'hello again' }, { key });
        await followToEnd(next.id);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(receiver.received.filter((delivery) => delivery.path === '/gone')).toHaveLength(1);
        expect((await api('DELETE', `/v1/webhooks/${flaky.id}`, { key })).body).toMatchObject({
          id: flaky.id,
          deleted: true,
        });
      },
    );
  });
});

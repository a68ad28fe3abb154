import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { readEventStream, SIM_TOKENS_PER_SECOND } from '../support/run-events';
import { OWNER_KEY, startStack, type RunsStack } from '../support/stack';

async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("runs REST: a project's workspace files, and resending a failed webhook delivery", () => {
  let stack: RunsStack;
  let projectId: string;
  let stranger: string;
  let readOnly: string;

  beforeAll(async () => {
    // One retry 150 ms after the first failure, so a refused delivery has failed within a second.
    stack = await startStack({
      label: 'runs_files_resend',
      simTokensPerSecond: SIM_TOKENS_PER_SECOND,
      runs: { env: { RUNS_WEBHOOK_RETRY_SCHEDULE_MS: '150' } },
    });
    projectId = await stack.createProject({ name: 'files' });
    await stack.runs.database.prisma.workspaceFile.createMany({
      data: [
        { projectId, path: 'index.html', content: '<script>alert(document.cookie)</script>' },
        { projectId, path: 'notes/plan (v2).md', content: '# Plan\nShip it.' },
        { projectId, path: 'report.txt', content: 'café' },
      ],
    });
    stranger = (await stack.seedKey({ userId: await stack.seedUser() })).secret;
    readOnly = (await stack.seedKey({ scopes: ['runs:read'] })).secret;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const api = (...args: Parameters<RunsStack['api']>) => stack.api(...args);
  const filesOf = (id: string) => `/v1/projects/${id}/files`;
  const contentOf = (id: string, path: string) => `/v1/projects/${id}/files/content?path=${encodeURIComponent(path)}`;

  describe('workspace files', () => {
    it('lists the files in path order with size and update time, paged by path', async () => {
      const all = await api('GET', filesOf(projectId), { key: readOnly });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({
        object: 'list',
        has_more: false,
        first_id: 'index.html',
        last_id: 'report.txt',
      });
      expect(all.body.data).toEqual([
        expect.objectContaining({ object: 'workspace_file', path: 'index.html', size: 39 }),
        expect.objectContaining({ path: 'notes/plan (v2).md', size: 15 }),
        expect.objectContaining({ path: 'report.txt', size: 5, updated_at: expect.any(String) }),
      ]);
      const first = await api('GET', `${filesOf(projectId)}?limit=1`, { key: OWNER_KEY });
      expect(first.body).toMatchObject({ has_more: true, last_id: 'index.html' });
      const next = await api('GET', `${filesOf(projectId)}?limit=1&after_id=${encodeURIComponent('index.html')}`, {
        key: OWNER_KEY,
      });
      expect(next.body.data.map((file: { path: string }) => file.path)).toEqual(['notes/plan (v2).md']);
    });

    it('serves a file as a plain-text attachment that is never sniffed or rendered as a page', async () => {
      const res = await fetch(`${stack.edge.url}${contentOf(projectId, 'index.html')}`, {
        headers: { authorization: `Bearer ${readOnly}`, accept: 'text/html,*/*' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''index.html");
      expect(res.headers.get('content-security-policy')).toContain('sandbox');
      expect(await res.text()).toBe('<script>alert(document.cookie)</script>');

      const nested = await fetch(`${stack.edge.url}${contentOf(projectId, 'notes/plan (v2).md')}`, {
        headers: { authorization: `Bearer ${OWNER_KEY}` },
      });
      expect(nested.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''plan%20%28v2%29.md");
      expect(await nested.text()).toBe('# Plan\nShip it.');
    });

    it('answers the file with its content as JSON for Accept: application/json', async () => {
      const res = await api('GET', contentOf(projectId, 'report.txt'), {
        key: OWNER_KEY,
        headers: { accept: 'application/json' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'workspace_file', path: 'report.txt', size: 5, content: 'café' });
    });

    it.each([
      ['a parent segment', '../files/report.txt'],
      ['a traversal inside the path', 'notes/../../../etc/passwd'],
      ['an absolute path', '/etc/passwd'],
      ['a backslash traversal', '..\\report.txt'],
      ['a NUL', 'report.txt\0.html'],
      ['an empty path', ''],
      ['an overlong path', 'a'.repeat(257)],
    ])('refuses %s with 400 invalid_request on path', async (_what, path) => {
      const res = await api('GET', contentOf(projectId, path), { key: OWNER_KEY });
      expect(res.status).toBe(400);
      // The edge refuses a NUL in any query value before the route sees it (as `query.path`).
      expect(res.body).toMatchObject({ error: 'invalid_request', param: expect.stringMatching(/^(query\.)?path$/) });
    });

    it('refuses traversal spelled in the URL: percent-encoded in the query (400), double-encoded (404)', async () => {
      const encoded = await api('GET', `${filesOf(projectId)}/content?path=%2e%2e%2f%2e%2e%2fetc%2fpasswd`, {
        key: OWNER_KEY,
      });
      expect(encoded.status).toBe(400);
      const doubled = await api('GET', `${filesOf(projectId)}/content?path=%252e%252e%252fetc%252fpasswd`, {
        key: OWNER_KEY,
      });
      expect(doubled.status).toBe(404);
      expect(doubled.body).toMatchObject({ error: 'not_found' });
      const missing = await api('GET', `${filesOf(projectId)}/content`, { key: OWNER_KEY });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ error: 'invalid_request', param: 'path' });
      const inPath = await fetch(`${stack.edge.url}${filesOf(projectId)}/..%2F..%2F..%2Fv1%2Fkeys`, {
        headers: { authorization: `Bearer ${OWNER_KEY}` },
      });
      expect(inPath.status).toBe(404);
    });

    it("answers 404 for another account's project and for a file that is not there", async () => {
      expect((await api('GET', filesOf(projectId), { key: stranger })).status).toBe(404);
      const foreign = await api('GET', contentOf(projectId, 'report.txt'), { key: stranger });
      expect(foreign.status).toBe(404);
      expect(JSON.stringify(foreign.body)).not.toContain('café');
      expect((await api('GET', contentOf(projectId, 'nope.txt'), { key: OWNER_KEY })).status).toBe(404);
    });

    it('needs runs:read, and a credential', async () => {
      const gatewayOnly = (await stack.seedKey({ scopes: ['gateway:invoke'] })).secret;
      const refused = await api('GET', filesOf(projectId), { key: gatewayOnly });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['runs:read'] });
      expect((await api('GET', contentOf(projectId, 'report.txt'), { key: gatewayOnly })).status).toBe(403);
      expect((await api('GET', contentOf(projectId, 'report.txt'))).status).toBe(401);
    });
  });

  describe('resending a failed delivery', () => {
    let receiver: Server;
    let hookUrl: string;
    let answer = 500;
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => (received.push({ headers: req.headers, body }), res.writeHead(answer).end()));
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    });
    afterAll(async () => {
      await new Promise((resolve) => receiver?.close(resolve));
    });

    it(
      'sends the same event again with a fresh signature once the receiver is back, recorded as attempt 3; ' +
        'only a failed delivery, only by its owner with runs:write',
      async () => {
        const hook = await api('POST', '/v1/webhooks', {
          key: OWNER_KEY,
          body: { url: hookUrl, events: ['run.succeeded'] },
        });
        expect(hook.status).toBe(201);
        const run = await api('POST', '/v1/runs', { key: OWNER_KEY, body: { project_id: projectId, prompt: 'hello' } });
        await readEventStream(`${stack.edge.url}/v1/runs/${run.body.id}/events`, { key: OWNER_KEY });
        const deliveriesUrl = `/v1/webhooks/${hook.body.id}/deliveries`;
        const failed = await eventually(
          () => api('GET', deliveriesUrl, { key: OWNER_KEY }),
          (res) => res.body.data[0]?.status === 'failed',
        );
        const delivery = failed.body.data[0];
        expect(delivery.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([500, 500]);
        const resendUrl = `${deliveriesUrl}/${delivery.id}/resend`;

        expect((await api('POST', resendUrl, { key: readOnly })).status).toBe(403);
        const foreign = await api('POST', resendUrl, { key: stranger });
        expect(foreign.status).toBe(404);
        expect(foreign.body).toMatchObject({ error: 'not_found', param: 'webhook_id' });
        const malformed = await api('POST', `${deliveriesUrl}/not-a-delivery/resend`, { key: OWNER_KEY });
        expect(malformed.status).toBe(400);
        expect(malformed.body).toMatchObject({ error: 'invalid_request', param: 'delivery_id' });
        const unknown = await api('POST', `${deliveriesUrl}/msg_01JZZZZZZZZZZZZZZZZZZZZZZZ/resend`, { key: OWNER_KEY });
        expect(unknown.status).toBe(404);
        expect(received).toHaveLength(2);

        answer = 204;
        const resentAt = Math.floor(Date.now() / 1000);
        const resent = await api('POST', resendUrl, { key: OWNER_KEY });
        expect(resent.status).toBe(202);
        expect(resent.body).toMatchObject({ object: 'webhook_delivery', id: delivery.id, status: 'pending' });

        const delivered = await eventually(
          () => api('GET', deliveriesUrl, { key: OWNER_KEY }),
          (res) => res.body.data[0]?.status === 'succeeded',
        );
        expect(
          delivered.body.data[0].attempts.map((attempt: { attempt: number; status_code: number }) => [
            attempt.attempt,
            attempt.status_code,
          ]),
        ).toEqual([
          [1, 500],
          [2, 500],
          [3, 204],
        ]);
        expect(received).toHaveLength(3);
        const [first, last] = [received[0]!, received[2]!];
        expect(last.headers['webhook-id']).toBe(first.headers['webhook-id']);
        expect(last.body).toBe(first.body);
        expect(Number(last.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(resentAt);
        const headers = Object.fromEntries(Object.entries(last.headers).map(([name, value]) => [name, String(value)]));
        expect(new Webhook(hook.body.secret).verify(last.body, headers)).toMatchObject({ type: 'run.succeeded' });

        const again = await api('POST', resendUrl, { key: OWNER_KEY });
        expect(again.status).toBe(409);
        expect(again.body).toMatchObject({ error: 'conflict', param: 'delivery_id' });
      },
      60_000,
    );
  });
});

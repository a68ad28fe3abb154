import { createServer, type Server } from 'node:http';
import { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import { createRpcClient } from '@sbc/rpc';
import { parseExchanges } from '@sbc/service-docs';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadRunsConfig, start } from '../main';
import type { PrivateEgress } from '@sbc/egress';
import { createEgress, type Egress } from './egress';
import { runTool, type ToolContext } from './tools';

describe(
  "a run's tools: the project workspace, and URL fetches " + 'through the egress filter, recorded for the learner',
  () => {
    let db: TestDatabase;
    let running: Awaited<ReturnType<typeof start>>;
    let server: Server;
    let origin: string;
    const egresses: Egress[] = [];
    const egress = (privateEgress: PrivateEgress) => {
      const made = createEgress({ privateEgress, ownOrigins: () => ['http://127.0.0.1:8080'], timeoutMs: 5_000 });
      egresses.push(made);
      return made;
    };
    let ctx: ToolContext;

    beforeAll(async () => {
      db = await createTestDatabase('runs_tools');
      running = await start(
        loadRunsConfig({
          RUNS_GRPC_PORT: '0',
          RUNS_HTTP_PORT: '0',
          RUNS_WORKERS: '0',
          DATABASE_URL: db.databaseUrl,
          SBC_DATA_DIR: 'memory://',
          LOG_LEVEL: 'silent',
        }),
      );
      server = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'sid=LEAKcookie' });
        res.end(JSON.stringify({ path: req.url, items: [{ id: 1, name: 'first' }], token: 'LEAKresponseToken' }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const prisma = running.database.prisma;
      await prisma.project.create({ data: { id: 'prj_tools', accountId: 'usr_tools', name: 'tools' } });
      await prisma.run.create({
        data: {
          id: 'run_tools',
          accountId: 'usr_tools',
          projectId: 'prj_tools',
          model: 'house',
          prompt: 'p',
          caller: { user_id: 'usr_tools' },
        },
      });
      ctx = {
        db: prisma,
        egress: egress('everyone'),
        runId: 'run_tools',
        projectId: 'prj_tools',
        fetchTimeoutMs: 5_000,
        signal: new AbortController().signal,
        dialAs: 'tenant',
      };
    });
    afterAll(async () => {
      for (const made of egresses) await made.close();
      await new Promise((resolve) => server?.close(resolve));
      await running?.stop();
      await db?.drop();
    });

    it(
      'writes, reads and lists workspace files; a missing ' + 'file or bad arguments are failures the model reads',
      async () => {
        expect(await runTool(ctx, 'write_file', JSON.stringify({ path: 'notes/a.md', content: 'hello' }))).toEqual({
          ok: true,
          output: JSON.stringify({ path: 'notes/a.md', bytes: 5 }),
        });
        expect(JSON.parse((await runTool(ctx, 'read_file', JSON.stringify({ path: 'notes/a.md' }))).output)).toEqual({
          path: 'notes/a.md',
          content: 'hello',
        });
        expect(JSON.parse((await runTool(ctx, 'list_files', '{}')).output).files).toEqual([
          { path: 'notes/a.md', bytes: 5, updated_at: expect.any(String) },
        ]);
        expect(await runTool(ctx, 'read_file', JSON.stringify({ path: 'nope' }))).toMatchObject({ ok: false });
        expect(await runTool(ctx, 'write_file', 'not json')).toMatchObject({ ok: false });
        expect(await runTool(ctx, 'delete_everything', '{}')).toMatchObject({ ok: false });
      },
    );

    it(
      'fetches a URL, and the recorded exchange is redacted ' + 'and in the shape the service-documents learner reads',
      async () => {
        const result = await runTool(
          ctx,
          'fetch_url',
          JSON.stringify({
            url: `${origin}/items?api_key=LEAKqueryKey&page=1`,
            headers: { authorization: 'Bearer LEAKbearerToken' },
          }),
        );
        expect(result.ok).toBe(true);
        expect(JSON.parse(result.output)).toMatchObject({
          status: 200,
          content_type: 'application/json',
          truncated: false,
        });

        const client = createRpcClient(RunsService, { target: running.grpcAddress });
        try {
          const page = await client.listExchanges({ host: '127.0.0.1', limit: 10 });
          const exchanges = parseExchanges(page.exchangesJson.map((json) => JSON.parse(json)));
          expect(exchanges).toHaveLength(1);
          expect(exchanges[0]).toMatchObject({
            method: 'get',
            status: 200,
            source: 'runs',
            response: { body: { items: [{ id: 1, name: 'first' }] } },
          });
          expect(new URL(exchanges[0]!.url).searchParams.get('page')).toBe('1');
          expect(page.exchangesJson.join('')).not.toMatch(/LEAK/);
        } finally {
          client.close();
        }
      },
    );

    it(
      "by default a tenant's run is refused loopback targets by address and by name, and records nothing; an " +
        "operator's run reaches them",
      async () => {
        const denied = { ...ctx, egress: egress('operators') };
        for (const url of [`${origin}/items`, `http://localhost:${new URL(origin).port}/items`]) {
          const result = await runTool(denied, 'fetch_url', JSON.stringify({ url }));
          expect({ url, ...result }).toMatchObject({
            url,
            ok: false,
            output: expect.stringContaining('loopback or private'),
          });
        }
        await expect(denied.egress.refusal('http://10.0.0.8/hook', 'tenant')).resolves.toMatch(/loopback or private/);
        await expect(denied.egress.refusal('http://10.0.0.8/hook', 'operator')).resolves.toBeUndefined();
        const operatorRun = await runTool(
          { ...denied, dialAs: 'operator' },
          'fetch_url',
          JSON.stringify({ url: `${origin}/items` }),
        );
        expect(operatorRun.ok).toBe(true);
        await expect(ctx.egress.refusal('http://10.0.0.8/hook', 'tenant')).resolves.toBeUndefined();
        // Never, whatever the setting: link-local metadata, and the gateway itself.
        await expect(ctx.egress.refusal('http://169.254.169.254/latest/meta-data', 'operator')).resolves.toMatch(
          /never dials/,
        );
        await expect(ctx.egress.refusal('http://127.0.0.1:8080/v1/chat/completions', 'operator')).resolves.toMatch(
          /own address/,
        );
        // The first test's fetch and the operator's; the refused fetches left nothing.
        expect(await running.database.prisma.exchange.count()).toBe(2);
      },
    );
  },
);

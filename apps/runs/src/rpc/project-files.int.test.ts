import { timestampDate } from '@bufbuild/protobuf/wkt';
import { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadRunsConfig, start } from '../main';

describe("a project's workspace files over gRPC: listed in path order, read one at a time, only the owner's", () => {
  let db: TestDatabase;
  let running: Awaited<ReturnType<typeof start>>;
  let client: RpcClientOf<typeof RunsService>;
  let projectId: string;
  const owner = 'usr_files_owner';

  beforeAll(async () => {
    db = await createTestDatabase('runs_files');
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
    client = createRpcClient(RunsService, { target: running.grpcAddress });
    projectId = (await client.createProject({ userId: owner, name: 'files' })).project!.id;
    // What a run's write_file tool leaves behind: rows keyed by path.
    await running.database.prisma.workspaceFile.createMany({
      data: [
        { projectId, path: 'notes/plan.md', content: '# Plan\nShip it.' },
        { projectId, path: 'a.txt', content: 'café' },
        { projectId, path: 'z/deep/file.json', content: '{"ok":true}' },
      ],
    });
  });
  afterAll(async () => {
    client?.close();
    await running?.stop();
    await db?.drop();
  });

  it('lists every file in path order with its size in UTF-8 bytes and its update time', async () => {
    const page = await client.listProjectFiles({ userId: owner, projectId, limit: 100 });
    expect(page.hasMore).toBe(false);
    expect(page.files.map((file) => [file.path, file.size])).toEqual([
      ['a.txt', 5],
      ['notes/plan.md', 15],
      ['z/deep/file.json', 11],
    ]);
    expect(timestampDate(page.files[0]!.updatedAt!).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('pages by path: after a path, before a path, and has_more while files remain', async () => {
    const first = await client.listProjectFiles({ userId: owner, projectId, limit: 2 });
    expect(first.files.map((file) => file.path)).toEqual(['a.txt', 'notes/plan.md']);
    expect(first.hasMore).toBe(true);
    const next = await client.listProjectFiles({ userId: owner, projectId, limit: 2, afterPath: 'notes/plan.md' });
    expect(next.files.map((file) => file.path)).toEqual(['z/deep/file.json']);
    expect(next.hasMore).toBe(false);
    const back = await client.listProjectFiles({ userId: owner, projectId, limit: 2, beforePath: 'z/deep/file.json' });
    expect(back.files.map((file) => file.path)).toEqual(['a.txt', 'notes/plan.md']);
    await expect(
      client.listProjectFiles({ userId: owner, projectId, limit: 2, afterPath: 'a.txt', beforePath: 'z' }),
    ).rejects.toMatchObject({ code: 'invalid_request', param: 'before_id' });
  });

  it('reads one file with its content', async () => {
    const reply = await client.getProjectFile({ userId: owner, projectId, path: 'notes/plan.md' });
    expect(reply.content).toBe('# Plan\nShip it.');
    expect(reply.file).toMatchObject({ path: 'notes/plan.md', size: 15 });
  });

  it.each(['../notes/plan.md', 'notes/../../etc/passwd', '/etc/passwd', 'C:\\boot.ini', 'notes\0plan.md', ''])(
    'refuses the hostile path %j as invalid_request on path',
    async (path) => {
      await expect(client.getProjectFile({ userId: owner, projectId, path })).rejects.toMatchObject({
        code: 'invalid_request',
        param: 'path',
      });
    },
  );

  it('answers not_found for a path with no file, even one spelled like an encoded traversal', async () => {
    for (const path of ['missing.md', '%2e%2e/notes/plan.md', 'notes/plan.md/'])
      await expect(client.getProjectFile({ userId: owner, projectId, path })).rejects.toMatchObject({
        code: 'not_found',
        param: 'path',
      });
  });

  it("answers not_found for another account's project, for its list and its files alike", async () => {
    await expect(client.listProjectFiles({ userId: 'usr_files_other', projectId, limit: 10 })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(client.getProjectFile({ userId: 'usr_files_other', projectId, path: 'a.txt' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { testBackends } from '@sbc/testing';
import { readEventStream, SIM_TOKENS_PER_SECOND, type SseFrame } from '../support/run-events';
import { OWNER_KEY, startStack, type RunsStack } from '../support/stack';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The runs service built as its own process (as `nx build runs` does), so a worker can be killed outright:
 * no shutdown, no lease given back, its model call cut mid-stream.
 */
async function bundleRunsService(dir: string): Promise<string> {
  const entry = path.join(dir, 'main.js');
  await build({
    entryPoints: [path.join(ROOT, 'apps/runs/src/main.ts')],
    outfile: entry,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    tsconfig: path.join(ROOT, 'tsconfig.base.json'),
    logLevel: 'error',
    define: { SBC_BUNDLE_ENTRY: JSON.stringify('runs') },
  });
  await cp(path.join(ROOT, 'apps/runs/prisma/migrations'), path.join(dir, 'migrations/runs'), { recursive: true });
  // Packages stay external; Prisma loads some with import(), which finds them only in a node_modules up the tree.
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return entry;
}

// Recovery needs two runs services on one database, which only a PostgreSQL server gives.
const describeWithPostgres = testBackends().postgresUrl ? describe : describe.skip;

describeWithPostgres('runs: a worker killed mid-run is recovered by another', () => {
  let stack: RunsStack;
  let dir: string;
  let entry: string;
  let child: ChildProcess | undefined;
  let childOutput = '';

  beforeAll(async () => {
    // The edge's own runs service serves the API only; the workers are the process below, then another service.
    [stack, dir] = await Promise.all([
      startStack({
        label: 'runs_recovery',
        simTokensPerSecond: SIM_TOKENS_PER_SECOND,
        runs: { env: { RUNS_WORKERS: '0', RUNS_LEASE_MS: '1500' } },
      }),
      mkdtemp(path.join(tmpdir(), 'sbc-runs-worker-')),
    ]);
    entry = await bundleRunsService(dir);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const eventsUrl = (runId: string) => `${stack.edge.url}/v1/runs/${runId}/events`;
  const runKeys = (runId: string) =>
    stack.account.database.prisma.callerKey.findMany({
      where: { name: `run ${runId}` },
      orderBy: { createdAt: 'asc' },
    });

  it(
    'continues the run from its last checkpoint after the lease runs out: one gapless stream, one settle, every key ' +
      'revoked',
    async () => {
      child = spawn(process.execPath, [entry], {
        env: { PATH: process.env.PATH ?? '', ...stack.runsEnv, RUNS_WORKERS: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.on('data', (chunk) => (childOutput += chunk));
      child.stderr?.on('data', (chunk) => (childOutput += chunk));
      const exited = new Promise((resolve) => child!.once('exit', resolve));

      const projectId = await stack.createProject({ name: 'recovery' });
      // 400 tokens at the sim's pace: about 4 s per model call, long enough to be cut.
      const created = await stack.api('POST', '/v1/runs', {
        key: OWNER_KEY,
        body: { project_id: projectId, prompt: 'write it all sim-tokens:400' },
      });
      expect(created.status).toBe(201);
      const runId = created.body.id as string;

      const before = await readEventStream(eventsUrl(runId), {
        key: OWNER_KEY,
        until: (frame) => frame.event === 'message.delta',
        timeoutMs: 30_000,
      });
      if (before.frames.at(-1)?.event !== 'message.delta')
        throw new Error(`the worker process did not start the run; its output:\n${childOutput}`);
      expect(before.frames.map((frame) => frame.event)).toEqual(['run.queued', 'run.started', 'message.delta']);
      const [firstKey] = await runKeys(runId);
      expect(firstKey?.revokedAt).toBeNull();

      child.kill('SIGKILL');
      await exited;
      child = undefined;
      await stack.startRunsService({ RUNS_WORKERS: '1' });

      const after = await readEventStream(eventsUrl(runId), {
        key: OWNER_KEY,
        lastEventId: before.frames.at(-1)!.id,
        timeoutMs: 30_000,
      });
      expect(after.ended).toBe(true);
      const stream: SseFrame[] = [...before.frames, ...after.frames];
      expect(stream.map((frame) => Number(frame.id))).toEqual(stream.map((_frame, index) => index + 1));
      const restarted = after.frames.find((frame) => frame.event === 'run.started');
      expect(JSON.parse(restarted!.data).data).toEqual({ attempt: 2, model: 'house', recovered: true });
      expect(after.frames.at(-1)?.event).toBe('run.succeeded');
      expect(stream.filter((frame) => frame.event === 'run.succeeded')).toHaveLength(1);

      const run = await stack.api('GET', `/v1/runs/${runId}`, { key: OWNER_KEY });
      expect(run.body).toMatchObject({ status: 'succeeded', output: expect.stringContaining('filler-400') });
      // The dead worker's key was revoked when the run was claimed again; the new one when it settled.
      const keys = await runKeys(runId);
      expect(keys).toHaveLength(2);
      expect(keys.every((key) => key.revokedAt !== null)).toBe(true);
    },
  );
});

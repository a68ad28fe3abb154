import { createParser } from 'eventsource-parser';
import { createTestDatabase, freePort, testBackends, type TestDatabase } from '@sbc/testing';
import { loadRunsConfig, start as startRuns } from '@sbc/app-runs';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { OWNER_KEY, startAccountSurface, type AccountSurfaceStack } from './account-surface.stack';

export { OWNER_KEY };

export type RunningRuns = Awaited<ReturnType<typeof startRuns>>;

/**
 * The runs area as a caller meets it: the edge and the account service (startAccountSurface), a runs service
 * on its own database with workers whose model calls go back through the edge, and a sim-upstream serving
 * `house` at a steady token rate, so a model call lasts long enough to be cancelled or killed mid-way
 * (`sim-tokens:<N>` in a prompt makes a reply N tokens long). PostgreSQL and Redis when the run has them.
 */
export interface RunsStack extends AccountSurfaceStack {
  runs: RunningRuns;
  runsDb: TestDatabase;
  /** The sim behind `house`. */
  houseSim: RunningSim;
  /** The settings every runs service of this stack starts with (add to them for another one). */
  runsEnv: Record<string, string>;
  /** Another runs service on the same database (more workers), stopped with the stack. */
  startRunsService(env?: Record<string, string>): Promise<RunningRuns>;
  /** A project of the owner. */
  createProject(body?: Record<string, unknown>): Promise<string>;
}

export const SIM_TOKENS_PER_SECOND = 100;

export async function startRunsStack(label: string, options: { runsEnv?: Record<string, string> } = {}): Promise<RunsStack> {
  const redisUrl = testBackends().redisUrl;
  const runsPort = await freePort();
  const houseSim = await startSim(loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: String(SIM_TOKENS_PER_SECOND), LOG_LEVEL: 'silent' }));
  const extraRuns: RunningRuns[] = [];
  let surface: AccountSurfaceStack | undefined;
  let runsDb: TestDatabase | undefined;
  let runs: RunningRuns | undefined;
  const stop = async () => {
    for (const service of extraRuns.splice(0).reverse()) await service.stop();
    await runs?.stop();
    await surface?.stop();
    await houseSim.stop();
    await runsDb?.drop();
  };
  try {
    surface = await startAccountSurface(label, {
      edgeEnv: {
        RUNS_GRPC_TARGET: `127.0.0.1:${runsPort}`,
        HOUSE_ENGINES: JSON.stringify({ house: [{ dialect: 'openai', base_url: `${houseSim.url}/v1`, model: 'sim-large' }] }),
      },
    });
    runsDb = await createTestDatabase(`${label}_runs`);
    const runsEnv: Record<string, string> = {
      RUNS_GRPC_PORT: '0',
      RUNS_HTTP_PORT: '0',
      SBC_DATA_DIR: 'memory://',
      ...(runsDb.databaseUrl ? { DATABASE_URL: runsDb.databaseUrl } : {}),
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      ACCOUNT_GRPC_TARGET: surface.account.grpcAddress,
      GATEWAY_URL: surface.edge.url,
      RUNS_POLL_MS: '200',
      RUNS_WEBHOOK_POLL_MS: '100',
      // The tests' webhook receivers listen on loopback: runs dials them for the owner, an operator.
      LOG_LEVEL: 'silent',
      ...options.runsEnv,
    };
    // Without PostgreSQL every service would get its own in-memory database, so extra services could not
    // share the runs: they are only offered with a database server.
    const startRunsService = async (env: Record<string, string> = {}) => {
      if (!runsDb?.databaseUrl) throw new Error('a second runs service needs TEST_DATABASE_URL (a shared PostgreSQL)');
      const service = await startRuns(loadRunsConfig({ ...runsEnv, ...env }));
      extraRuns.push(service);
      return service;
    };
    runs = await startRuns(loadRunsConfig({ ...runsEnv, RUNS_GRPC_PORT: String(runsPort) }));
    const api = surface.api;
    const createProject = async (body: Record<string, unknown> = {}) => {
      const res = await api('POST', '/v1/projects', { key: OWNER_KEY, body: { name: 'demo', ...body } });
      if (res.status !== 201) throw new Error(`creating a project answered ${res.status}`);
      return res.body.id as string;
    };
    return { ...surface, stop, runs, runsDb, houseSim, runsEnv, startRunsService, createProject };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a run's event stream as a client does: frames as they arrive, until the server ends the stream,
 * `until` says stop (the connection is then dropped, like a client going away), or `timeoutMs` passes.
 */
export async function readEventStream(
  url: string,
  options: { key: string; lastEventId?: string; until?: (frame: SseFrame, frames: SseFrame[]) => boolean; timeoutMs?: number },
): Promise<{ status: number; frames: SseFrame[]; ended: boolean; contentType: string | null }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 20_000);
  const frames: SseFrame[] = [];
  let stopped = false;
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${options.key}`, accept: 'text/event-stream', ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}) },
      signal: controller.signal,
    });
    if (!res.ok || !res.body) return { status: res.status, frames, ended: true, contentType: res.headers.get('content-type') };
    const parser = createParser({
      onEvent(event) {
        if (stopped) return;
        const frame: SseFrame = { data: event.data, ...(event.id !== undefined ? { id: event.id } : {}), ...(event.event ? { event: event.event } : {}) };
        frames.push(frame);
        if (options.until?.(frame, frames)) stopped = true;
      },
    });
    const text = new TextDecoder();
    // Leaving the loop early cancels the body, which drops the connection as a client going away does.
    for await (const chunk of res.body) {
      parser.feed(text.decode(chunk, { stream: true }));
      if (stopped) break;
    }
    return { status: res.status, frames, ended: !stopped, contentType: res.headers.get('content-type') };
  } finally {
    clearTimeout(timer);
  }
}

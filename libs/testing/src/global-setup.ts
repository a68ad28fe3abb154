import { connect } from 'node:net';
import { BACKENDS_ENV, backendsFromEnv, describeBackends } from './backends';

type Stoppable = { stop(): Promise<unknown> };
const started: Stoppable[] = [];
(globalThis as { __sbcTestContainers?: Stoppable[] }).__sbcTestContainers = started;

/** True when a Docker engine answers on its socket within a second. */
async function dockerAnswers(): Promise<boolean> {
  const host = process.env.DOCKER_HOST;
  const socketPath = !host
    ? '/var/run/docker.sock'
    : host.startsWith('unix://')
      ? host.slice('unix://'.length)
      : undefined;
  return new Promise((resolve) => {
    const socket = socketPath
      ? connect({ path: socketPath })
      : connect({
          host: new URL(host!.replace(/^tcp:/, 'http:')).hostname,
          port: Number(new URL(host!.replace(/^tcp:/, 'http:')).port || 2375),
        });
    const timer = setTimeout(() => finish(false), 1000);
    function finish(ok: boolean) {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    }
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

// Jest loads globalSetup/globalTeardown modules by their default export.
// eslint-disable-next-line no-restricted-syntax
export default async function globalSetup(): Promise<void> {
  if (process.env[BACKENDS_ENV]) return; // decided by an earlier project in this run
  const backends = backendsFromEnv();
  if (
    (!backends.postgresUrl || !backends.redisUrl) &&
    process.env.SBC_TEST_NO_CONTAINERS !== 'true' &&
    (await dockerAnswers())
  ) {
    if (!backends.postgresUrl) {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const container = await new PostgreSqlContainer('postgres:15-alpine').start();
      started.push(container);
      backends.postgresUrl = container.getConnectionUri();
      backends.sources.postgres = 'testcontainers';
    }
    if (!backends.redisUrl) {
      const { RedisContainer } = await import('@testcontainers/redis');
      const container = await new RedisContainer('redis:7-alpine').start();
      started.push(container);
      backends.redisUrl = container.getConnectionUrl();
      backends.sources.redis = 'testcontainers';
    }
  }
  process.env[BACKENDS_ENV] = JSON.stringify(backends);
  process.stdout.write(`\n${describeBackends(backends)}\n`);
}

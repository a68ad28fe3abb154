import { readFileSync } from 'node:fs';
import { listen } from '@sbc/http';
import { isBundleEntry, runService } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { loadSimConfig, type SimConfig } from './config';
import { FaultInjector } from './faults/fault-injector';
import { BUILT_IN_MODELS } from './routes/models';
import { createApp, type SimDialect } from './server';
import { listenTls } from './tls-listener';

export { loadSimConfig, type SimConfig } from './config';
export type { SimDialect } from './server';

export interface RunningSim {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the simulator. Takes the parsed config so the embedded app and tests can run it on port 0 with zero
 * latency; `logger` defaults to one at `config.logLevel`. `dialects` (both by default) makes a test stand-in for
 * a server that speaks only one: it lists models in that dialect's shape whatever the request's headers, and
 * has no routes of the other.
 */
export async function start(
  config: SimConfig,
  options: { logger?: Logger; dialects?: readonly SimDialect[] } = {},
): Promise<RunningSim> {
  const logger = options.logger ?? createLogger({ service: 'sim-upstream', level: config.logLevel });
  const models = [...new Set([...BUILT_IN_MODELS, ...config.extraModels])];
  const deps = {
    timing: { latencyMs: config.latencyMs, tokensPerSecond: config.tokensPerSecond },
    slowMs: config.slowMs,
    models,
    apiKey: config.apiKey,
    logger,
    faults: new FaultInjector(),
    faultControl: config.faultControl,
    dialects: options.dialects ?? ['openai', 'anthropic'],
  };
  const app = createApp(deps);
  const server = config.tls
    ? await listenTls(app, deps, {
        cert: readFileSync(config.tls.certFile),
        key: readFileSync(config.tls.keyFile),
        host: config.host,
        port: config.port,
      })
    : await listen(app, { host: config.host, port: config.port });
  logger.info(
    { url: server.url, latencyMs: config.latencyMs, tokensPerSecond: config.tokensPerSecond },
    'sim-upstream (simulated LLM vendor) listening',
  );
  return { url: server.url, stop: () => server.close() };
}

if (isBundleEntry('sim-upstream')) {
  runService({ name: 'sim-upstream', load: () => loadSimConfig(process.env), start });
}

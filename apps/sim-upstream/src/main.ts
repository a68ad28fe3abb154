import { listen } from '@sbc/http';
import { isBundleEntry, runService } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { loadSimConfig, type SimConfig } from './config';
import { BUILT_IN_MODELS } from './routes/models';
import { createApp } from './server';

export { loadSimConfig, type SimConfig } from './config';

export interface RunningSim {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the simulator. Takes the parsed config so the embedded app and tests can run it on port 0 with zero
 * latency; `logger` defaults to one at `config.logLevel`.
 */
export async function start(config: SimConfig, options: { logger?: Logger } = {}): Promise<RunningSim> {
  const logger = options.logger ?? createLogger({ service: 'sim-upstream', level: config.logLevel });
  const models = [...new Set([...BUILT_IN_MODELS, ...config.extraModels])];
  const app = createApp({
    timing: { latencyMs: config.latencyMs, tokensPerSecond: config.tokensPerSecond },
    slowMs: config.slowMs,
    models,
    apiKey: config.apiKey,
    logger,
  });
  const server = await listen(app, { host: config.host, port: config.port });
  logger.info({ url: server.url, latencyMs: config.latencyMs, tokensPerSecond: config.tokensPerSecond }, 'sim-upstream (simulated LLM vendor) listening');
  return { url: server.url, stop: () => server.close() };
}

if (isBundleEntry('sim-upstream')) {
  runService({ name: 'sim-upstream', load: () => loadSimConfig(process.env), start });
}

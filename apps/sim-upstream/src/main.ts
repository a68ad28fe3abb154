import { listen } from '@sbc/http';
import { createLogger, type Logger } from '@sbc/logging';
import { loadConfig, type SimConfig } from './config';
import { BUILT_IN_MODELS } from './routes/models';
import { createApp } from './server';

export type { SimConfig } from './config';

export interface RunningSim {
  url: string;
  close(): Promise<void>;
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
  return { url: server.url, close: () => server.close() };
}

if (require.main === module) {
  const config = loadConfig(process.env);
  const logger = createLogger({ service: 'sim-upstream', level: config.logLevel });
  start(config, { logger }).then(
    (sim) => {
      logger.info({ url: sim.url, latencyMs: config.latencyMs, tokensPerSecond: config.tokensPerSecond }, 'sim-upstream (simulated LLM vendor) listening');
      let stopping = false;
      const shutdown = (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, 'sim-upstream draining');
        sim.close().then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, 'sim-upstream failed to close');
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (error: unknown) => {
      logger.fatal({ err: error }, 'sim-upstream failed to start');
      process.exit(1);
    },
  );
}

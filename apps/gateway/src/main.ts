import { createCacheAdapters, LocalCache, type PubSub } from '@sbc/cache';
import { listen, type RunningHttpServer } from '@sbc/http';
import { isBundleEntry, runService } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { checkHealth, createRpcClient } from '@sbc/rpc';
import { createAuthenticator, type Principal } from './auth/authenticator';
import { createAuthorize } from './auth/authorize';
import { createKeyUseRecorder } from './auth/key-use';
import { loadGatewayConfig, type GatewayConfig } from './config';
import { createGatewayApp } from './server';

export { loadGatewayConfig, type GatewayConfig } from './config';

/** Collaborators the embedded app shares between services in one process (in-process pub/sub). */
export interface GatewayOverrides {
  pubsub?: PubSub;
  logger?: Logger;
}

export interface RunningGateway {
  /** Where the edge listens (the bound address). */
  url: string;
  /** The public base URL (`BASE_URL`). */
  baseUrl: string;
  stop(): Promise<void>;
}

export async function start(config: GatewayConfig, overrides: GatewayOverrides = {}): Promise<RunningGateway> {
  const logger = overrides.logger ?? createLogger({ service: 'gateway', level: config.logLevel });
  const account = createRpcClient(AccountService, { target: config.accountTarget, deadlineMs: config.rpcDeadlineMs });
  const cache = overrides.pubsub ? undefined : createCacheAdapters({ redisUrl: config.redisUrl });
  const pubsub = overrides.pubsub ?? cache!.pubsub;

  const authenticator = createAuthenticator({
    account,
    pubsub,
    logger,
    cache: new LocalCache<Principal | null>({
      maxEntries: config.authCache.maxEntries,
      freshMs: config.authCache.freshMs,
      staleMs: config.authCache.staleMs,
      // Unknown secrets are remembered briefly so a flood of bad keys does not reach the account service.
      negativeFreshMs: 2_000,
      negativeStaleMs: 0,
      // A failed background refresh keeps serving the stale entry until its window ends; say so once per failure.
      onRefreshError: (err) => logger.warn({ err }, 'refreshing a cached credential failed'),
    }),
  });
  const keyUse = createKeyUseRecorder({ account, intervalMs: config.keyUseFlushMs, logger });

  let draining = false;
  const app = createGatewayApp({
    baseUrl: config.baseUrl,
    maxBodyBytes: config.maxBodyBytes,
    logger,
    account,
    authorize: createAuthorize({ authenticator, keyUse }),
    ready: async () => !draining && (await checkHealth(config.accountTarget, '', 1_000)) === 'SERVING',
  });
  // Everything the edge opened besides its listener, released on stop and on a failed start alike.
  const releaseClients = async () => {
    await keyUse.stop();
    await authenticator.stop();
    account.close();
    await cache?.close();
  };
  let http: RunningHttpServer;
  try {
    await authenticator.start();
    http = await listen(app, { host: config.host, port: config.port });
  } catch (error) {
    await releaseClients();
    throw error;
  }
  logger.info({ url: http.url, baseUrl: config.baseUrl }, 'gateway listening');

  let stopping: Promise<void> | undefined;
  return {
    url: http.url,
    baseUrl: config.baseUrl,
    stop() {
      stopping ??= (async () => {
        draining = true;
        await http.close(config.shutdownDrainMs);
        await releaseClients();
        logger.info('gateway stopped');
      })();
      return stopping;
    },
  };
}

if (isBundleEntry('gateway')) {
  runService({ name: 'gateway', load: () => loadGatewayConfig(process.env), start });
}

import express, { type Express } from 'express';
import type { Logger } from '@sbc/logging';
import type { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { healthRoutes } from '@sbc/http';
import type { Authorize } from './auth/authorize';
import { errorHandler, notFound } from './http/errors';
import { requestId } from './http/request-id';
import { keyRoutes } from './routes/keys';

export interface GatewayAppDeps {
  baseUrl: string;
  maxBodyBytes: number;
  logger: Logger;
  authorize: Authorize;
  account: RpcClientOf<typeof AccountService>;
  ready: () => Promise<boolean>;
}

/** The edge's HTTP surface; every route below is a plain factory over `deps`. */
export function createGatewayApp(deps: GatewayAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId());
  app.use(healthRoutes(deps.ready));
  app.use(express.json({ limit: deps.maxBodyBytes }));
  app.use(keyRoutes(deps));
  app.use(notFound());
  app.use(errorHandler(deps));
  return app;
}

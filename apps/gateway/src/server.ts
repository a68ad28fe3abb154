import type { GuardrailService } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import type { McpServerService } from '@sbc/proto/sbc/account/v1/mcp_pb';
import express, { type Express } from 'express';
import type { PubSub } from '@sbc/cache';
import type { Logger } from '@sbc/logging';
import type { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import type { AuditService } from '@sbc/proto/sbc/account/v1/audit_pb';
import type { DeviceService } from '@sbc/proto/sbc/account/v1/devices_pb';
import type { SessionService } from '@sbc/proto/sbc/account/v1/sessions_pb';
import type { TeamService } from '@sbc/proto/sbc/account/v1/teams_pb';
import type { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import type { BatchesService } from '@sbc/proto/sbc/runs/v1/batches_pb';
import type { FilesService } from '@sbc/proto/sbc/runs/v1/files_pb';
import type { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import type { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import type { UsageLedgerService } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import type { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { healthRoutes } from '@sbc/http';
import { CLIENT_ADDRESS } from './auth/actor';
import type { Authorize } from './auth/authorize';
import type { CaptureStore } from './capture/capture-store';
import type { SignInThrottle } from './limits/sign-in-throttle';
import { errorHandler, notFound } from './http/errors';
import { refuseHostileUrl } from './http/hostile-input';
import { WRITE_BARRIER } from './http/mount';
import { requestId } from './http/request-id';
import type { HouseEngines, ProviderEngines } from './routing/engines';
import type { RoutingTables } from './routing/routing-tables';
import type { McpSessions } from './mcp/mcp-sessions';
import { mcpRoutes } from './routes/mcp';
import type { ToolServerDirectory } from './mcp/tool-servers';
import { mcpServerRoutes } from './routes/mcp-servers';
import { docsRoutes } from './routes/docs';
import { serviceDocRoutes } from './routes/service-docs';
import { aliasRoutes } from './routes/aliases';
import { auditRoutes } from './routes/audit';
import { authRoutes } from './routes/auth';
import { captureRoutes } from './routes/captures';
import { consoleRoutes } from './routes/console';
import { developerRoutes } from './routes/developers';
import { rootRoutes } from './routes/root';
import { deviceRoutes } from './routes/devices';
import type { Budget } from './limits/budget';
import { keyRoutes } from './routes/keys';
import { guardrailRoutes } from './routes/guardrails';
import { teamRoutes } from './routes/teams';
import { upstreamRoutes } from './routes/upstreams';
import { modelRoutes, type ModelRoutesDeps } from './routes/models';
import { batchRoutes } from './routes/batches';
import { fileRoutes } from './routes/files';
import { messageBatchRoutes } from './routes/message-batches';
import { responseRoutes } from './routes/responses';
import { runRoutes } from './routes/runs';
import { usageRoutes } from './routes/usage';
import { xBuildRoutes } from './routes/x-builds';

export interface GatewayAppDeps {
  baseUrl: string;
  /** Reads what team and member caps have spent, for the team routes. */
  budget: Pick<Budget, 'capSpend'>;
  /** The service's per-key request ceiling: a key's own `rpm` must be within it. */
  rateLimitPerMinute: number;
  logger: Logger;
  authorize: Authorize;
  /** Sign-in, sign-up and pairing throttles for the routes reached without a key. */
  throttle: SignInThrottle;
  account: RpcClientOf<typeof AccountService>;
  sessions: RpcClientOf<typeof SessionService>;
  upstreams: RpcClientOf<typeof UpstreamService>;
  teams: RpcClientOf<typeof TeamService>;
  guardrails: RpcClientOf<typeof GuardrailService>;
  mcpServers: RpcClientOf<typeof McpServerService>;
  devices: RpcClientOf<typeof DeviceService>;
  audit: RpcClientOf<typeof AuditService>;
  ledger: RpcClientOf<typeof UsageLedgerService>;
  runs: RpcClientOf<typeof RunsService>;
  /** Stored OpenAI Responses (the runs service's), read back and deleted here. */
  responses: RpcClientOf<typeof ResponsesService>;
  /** Files (the runs service's), uploaded, read and deleted here. */
  files: RpcClientOf<typeof FilesService>;
  /** OpenAI batches (the runs service's). */
  batches: RpcClientOf<typeof BatchesService>;
  xbuilds: RpcClientOf<typeof XBuildsService>;
  house: HouseEngines;
  providers: ProviderEngines;
  routing: RoutingTables;
  /** The MCP tool servers each credential may use (cached; for the /mcp routes). */
  toolServers: ToolServerDirectory;
  /** The MCP gateway's sessions (`/mcp`, `/mcp/{slug}`). */
  mcp: McpSessions;
  /** Alias changes are relayed from it to paired devices (GET /v1/aliases/events). */
  pubsub: PubSub;
  /** Aborted when the edge starts draining (long-lived streams end on it). */
  draining: AbortSignal;
  ready: () => Promise<boolean>;
  /** Added to the readiness body: what is degraded without taking the edge out of traffic. */
  readyDetail?: () => Record<string, unknown>;
  /** What the edge last learnt about its house engines (GET /v1/models says when one cannot be reached). */
  reachability?: ModelRoutesDeps['reachability'];
  /** The playground's captures of model calls, read back by the session that made them. */
  captures: CaptureStore;
}

/**
 * The edge's REST surface; every route below is a plain factory over `deps`. Model calls do not come here:
 * the edge router (edge-router.ts) answers them on a lean path before Express. No body is read here: a route reads its
 * own once the caller's credential has passed (http/mount.ts), and an unknown path is 404 unread.
 */
export function createGatewayApp(deps: GatewayAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.locals[WRITE_BARRIER] = () => deps.pubsub.barrier();
  app.locals[CLIENT_ADDRESS] = deps.throttle.addressOf;
  app.use(requestId());
  // Before the shared check of a URL's text: the Responses, Files and Batches routes refuse in their dialect's
  // shape, that refusal included.
  app.use(responseRoutes(deps));
  app.use(fileRoutes(deps));
  app.use(batchRoutes(deps));
  app.use(messageBatchRoutes(deps));
  app.use(refuseHostileUrl());
  app.use(healthRoutes(deps.ready, deps.readyDetail));
  app.use(docsRoutes(deps));
  app.use(serviceDocRoutes(deps));
  app.use(consoleRoutes({ baseUrl: deps.baseUrl }));
  app.use(developerRoutes(deps));
  app.use(rootRoutes(deps));
  app.use(authRoutes(deps));
  app.use(keyRoutes(deps));
  app.use(upstreamRoutes(deps));
  app.use(mcpServerRoutes(deps));
  app.use(aliasRoutes(deps));
  app.use(teamRoutes(deps));
  app.use(guardrailRoutes(deps));
  app.use(deviceRoutes(deps));
  app.use(auditRoutes(deps));
  app.use(modelRoutes(deps));
  app.use(mcpRoutes(deps));
  app.use(usageRoutes(deps));
  app.use(captureRoutes(deps));
  app.use(xBuildRoutes(deps));
  app.use(runRoutes(deps));
  app.use(notFound());
  app.use(errorHandler(deps));
  return app;
}

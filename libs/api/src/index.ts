import type { RouteSpec } from './route';
import { AUDIT_ROUTES } from './routes/audit';
import { AUTH_ROUTES } from './routes/auth';
import { BATCH_ROUTES } from './routes/batches';
import { CAPTURE_ROUTES } from './routes/captures';
import { DEVICE_ROUTES } from './routes/devices';
import { FILE_ROUTES } from './routes/files';
import { GATEWAY_ROUTES } from './routes/gateway';
import { GUARDRAIL_ROUTES } from './routes/guardrails';
import { KEY_ROUTES } from './routes/keys';
import { MCP_SERVER_ROUTES } from './routes/mcp-servers';
import { MESSAGE_BATCH_ROUTES } from './routes/message-batches';
import { RESPONSE_ROUTES } from './routes/responses';
import { SERVICE_ROUTES } from './routes/service';
import { TEAM_ROUTES } from './routes/teams';
import { UPSTREAM_ROUTES } from './routes/upstreams';
import { USAGE_ROUTES } from './routes/usage';
import { RUN_ROUTES } from './routes/runs';
import { X_BUILD_ROUTES } from './routes/x-builds';

export {
  betaPolicyIssues,
  DROP_ALL_BETAS,
  isEmptyBetaPolicy,
  MAX_BETA_RULES,
  MAX_BETA_VALUE_LENGTH,
  type AnthropicBetaPolicy,
  type BetaPolicyIssue,
} from './anthropic-beta-policy';
export { DateTime, ErrorEnvelope, listOf, NO_CONTENT, PageQuery, pageQuery, Scope } from './common';
export { API_VERSION, buildOpenApiDocument } from './openapi';
export {
  defineRoute,
  expressPath,
  refusalStatuses,
  type HttpMethod,
  type ResponseSpec,
  type RouteAuth,
  type RouteSpec,
} from './route';
export * as auditRoutes from './routes/audit';
export * as authRoutes from './routes/auth';
export * as batchRoutes from './routes/batches';
export * as captureRoutes from './routes/captures';
export * as deviceRoutes from './routes/devices';
export * as fileRoutes from './routes/files';
export * as gatewayRoutes from './routes/gateway';
export * as guardrailRoutes from './routes/guardrails';
export * as keyRoutes from './routes/keys';
export * as mcpServerRoutes from './routes/mcp-servers';
export * as messageBatchRoutes from './routes/message-batches';
export * as responseRoutes from './routes/responses';
export * as serviceRoutes from './routes/service';
export * as teamRoutes from './routes/teams';
export * as upstreamRoutes from './routes/upstreams';
export * as usageRoutes from './routes/usage';
export * as runRoutes from './routes/runs';
export * as xBuildRoutes from './routes/x-builds';

/** Every route the service serves, in document order. */
export const ROUTES: readonly RouteSpec[] = [
  ...SERVICE_ROUTES,
  ...GATEWAY_ROUTES,
  ...RESPONSE_ROUTES,
  ...FILE_ROUTES,
  ...BATCH_ROUTES,
  ...MESSAGE_BATCH_ROUTES,
  ...AUTH_ROUTES,
  ...KEY_ROUTES,
  ...UPSTREAM_ROUTES,
  ...MCP_SERVER_ROUTES,
  ...TEAM_ROUTES,
  ...GUARDRAIL_ROUTES,
  ...DEVICE_ROUTES,
  ...AUDIT_ROUTES,
  ...USAGE_ROUTES,
  ...CAPTURE_ROUTES,
  ...X_BUILD_ROUTES,
  ...RUN_ROUTES,
];

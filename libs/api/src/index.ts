import type { RouteSpec } from './route';
import { AUTH_ROUTES } from './routes/auth';
import { DEVICE_ROUTES } from './routes/devices';
import { GATEWAY_ROUTES } from './routes/gateway';
import { KEY_ROUTES } from './routes/keys';
import { SERVICE_ROUTES } from './routes/service';
import { TEAM_ROUTES } from './routes/teams';
import { UPSTREAM_ROUTES } from './routes/upstreams';

export { DateTime, ErrorEnvelope, listOf, NO_CONTENT, PageQuery, pageQuery, Scope } from './common';
export { API_VERSION, buildOpenApiDocument } from './openapi';
export { defineRoute, expressPath, refusalStatuses, type HttpMethod, type ResponseSpec, type RouteAuth, type RouteSpec } from './route';
export * as authRoutes from './routes/auth';
export * as deviceRoutes from './routes/devices';
export * as gatewayRoutes from './routes/gateway';
export * as keyRoutes from './routes/keys';
export * as serviceRoutes from './routes/service';
export * as teamRoutes from './routes/teams';
export * as upstreamRoutes from './routes/upstreams';

/** Every route the service serves, in document order. */
export const ROUTES: readonly RouteSpec[] = [...SERVICE_ROUTES, ...GATEWAY_ROUTES, ...AUTH_ROUTES, ...KEY_ROUTES, ...UPSTREAM_ROUTES, ...TEAM_ROUTES, ...DEVICE_ROUTES];

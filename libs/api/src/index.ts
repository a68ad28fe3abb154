import type { RouteSpec } from './route';
import { GATEWAY_ROUTES } from './routes/gateway';
import { SERVICE_ROUTES } from './routes/service';

export { DateTime, ErrorEnvelope, listOf, NO_CONTENT, PageQuery, pageQuery, Scope } from './common';
export { API_VERSION, buildOpenApiDocument } from './openapi';
export { defineRoute, expressPath, refusalStatuses, type HttpMethod, type ResponseSpec, type RouteAuth, type RouteSpec } from './route';
export * as gatewayRoutes from './routes/gateway';
export * as serviceRoutes from './routes/service';

/** Every route the service serves, in document order. */
export const ROUTES: readonly RouteSpec[] = [...SERVICE_ROUTES, ...GATEWAY_ROUTES];

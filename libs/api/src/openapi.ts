import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import { ErrorEnvelope } from './common';
import { refusalStatuses, type RouteSpec } from './route';

/** The description version (spec "Versioning"). */
export const API_VERSION = '2026-09-23';

const REFUSALS: Record<number, string> = {
  400: 'invalid_request: a malformed body, path or query parameter; `param` names the first, `issues` lists all.',
  401: 'unauthorized: the credential is missing, malformed or unknown.',
  402: 'The budget for this call is spent.',
  403: 'insufficient_scope (with required_scopes), a revoked key, or an action this caller may not take.',
  404: 'not_found: no such resource on this account.',
  409: 'conflict: the resource is not in a state that allows this change.',
  413: 'request_too_large: the body is larger than the service accepts.',
  429: 'rate_limited: over the per-key request bucket; retry after x-ratelimit-reset.',
  500: 'internal_error: the service failed; nothing internal is shown.',
  502: 'The upstream could not be reached.',
  503: 'The service or lane is not available right now.',
  504: 'The upstream did not answer in time.',
};

const SECURITY_SCHEMES = {
  callerKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sbc_…',
    description: 'A caller key: `Authorization: Bearer sbc_…`. What it may do is its scopes.',
  },
  callerKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'The same caller key in `x-api-key`, as messages-dialect clients send it.',
  },
  session: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sbs_… or sbd_…',
    description: 'A signed-in session (`POST /v1/auth/sessions`) or a paired-device token; not narrowed by scopes.',
  },
} as const;

function security(route: RouteSpec): Array<Record<string, string[]>> {
  switch (route.auth.kind) {
    case 'none':
      return [];
    case 'session':
      return [{ session: [] }];
    case 'any':
      return [{ callerKey: [] }, { callerKeyHeader: [] }, { session: [] }];
    case 'scoped':
      return [{ callerKey: route.auth.scopes }, { callerKeyHeader: route.auth.scopes }, { session: [] }];
  }
}

function operation(route: RouteSpec): ZodOpenApiOperationObject {
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    const headers = response.headers ? { headers: response.headers } : {};
    responses[status] = response.schema
      ? {
          description: response.description,
          ...headers,
          content: {
            [response.contentType ?? 'application/json']: { schema: response.schema },
            ...Object.fromEntries(
              Object.entries(response.alternatives ?? {}).map(([type, schema]) => [type, { schema }]),
            ),
          },
        }
      : { description: response.description, ...headers };
  }
  for (const status of refusalStatuses(route)) {
    responses[String(status)] = {
      description: REFUSALS[status] ?? 'A refusal.',
      content: { 'application/json': { schema: route.errorBody ?? ErrorEnvelope } },
    };
  }
  const op: ZodOpenApiOperationObject = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: security(route),
    responses: responses as ZodOpenApiOperationObject['responses'],
  };
  if (route.description) op.description = route.description;
  if (route.auth.kind === 'scoped') op['x-required-scopes'] = route.auth.scopes;
  if (route.auth.kind !== 'none') op['x-rate-cost'] = route.rateCost ?? 1;
  if (route.params || route.query)
    op.requestParams = {
      ...(route.params ? { path: route.params } : {}),
      ...(route.query ? { query: route.query } : {}),
    } as ZodOpenApiOperationObject['requestParams'];
  if (route.body) op.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
  return op;
}

/** OpenAPI 3.1.0 for every route, built from the same schemas that validate requests. */
export function buildOpenApiDocument(
  routes: readonly RouteSpec[],
  options: { baseUrl: string },
): ReturnType<typeof createDocument> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    if (item[route.method]) throw new Error(`two routes for ${route.method.toUpperCase()} ${route.path}`);
    item[route.method] = operation(route);
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Model Gateway and Account API',
      version: API_VERSION,
      description:
        'One gateway for three model dialects (chat completions, ' +
        'responses, messages), the account surface around it, ' +
        'X builds and cloud agent runs.',
    },
    servers: [{ url: options.baseUrl }],
    paths,
    components: { securitySchemes: SECURITY_SCHEMES },
  });
}

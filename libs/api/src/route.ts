import type { z } from 'zod';
import type { Scope } from '@sbc/scopes';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call a route: `scoped` needs a caller key holding every listed scope (sessions and device tokens
 * pass unnarrowed); `any` takes any live credential; `session` takes only a signed-in session; `none` needs
 * no credential at all.
 */
export type RouteAuth = { kind: 'scoped'; scopes: Scope[] } | { kind: 'any' } | { kind: 'session' } | { kind: 'none' };

export interface ResponseSpec {
  description: string;
  /** The body; absent for an empty one (204). */
  schema?: z.ZodType;
  /** Defaults to application/json. */
  contentType?: string;
  /** The same answer in other media types, chosen by the request's Accept header (media type → body). */
  alternatives?: Record<string, z.ZodType>;
  /** Response headers worth documenting (ETag, Content-Range, ...), as an object of header name → schema. */
  headers?: z.ZodObject;
}

/**
 * One HTTP route of the service: the single source of truth for validating its input at the edge and for
 * its entry in /docs/openapi.json.
 */
export interface RouteSpec<
  Params extends z.ZodType = z.ZodType,
  Query extends z.ZodType = z.ZodType,
  Body extends z.ZodType = z.ZodType,
> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI form: `/v1/keys/{id}`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  auth: RouteAuth;
  params?: Params;
  query?: Query;
  body?: Body;
  /** Success responses by status. */
  responses: Record<number, ResponseSpec>;
  /**
   * Refusal statuses this route can answer with besides 400 (when it takes input), 401 and 403 (when it
   * takes a credential) and 500, which are added for it; each is the shared Error envelope unless `errorBody` says
   * otherwise.
   */
  errors?: number[];
  /** A different refusal body (the model routes answer in their dialect). */
  errorBody?: z.ZodType;
  /**
   * How many requests one call counts as against the caller's per-minute bucket; default 1. Routes that cost
   * the service far more than one request (exports, probes, run and build intake) take more.
   */
  rateCost?: number;
  /** The route's body limit when larger than the account surface's 1 MiB (a batch of model calls). */
  maxBodyBytes?: number;
}

/**
 * Declares a route; the generic parameters carry the input types to the handler that mounts it, and the
 * literal method, path and responses to typed clients (the console's), which read both ends of a call from here.
 */
export function defineRoute<
  Params extends z.ZodType = z.ZodNever,
  Query extends z.ZodType = z.ZodNever,
  Body extends z.ZodType = z.ZodNever,
  Method extends HttpMethod = HttpMethod,
  Path extends string = string,
  Responses extends Record<number, ResponseSpec> = Record<number, ResponseSpec>,
>(
  spec: RouteSpec<Params, Query, Body> & { method: Method; path: Path; responses: Responses },
): RouteSpec<Params, Query, Body> & { method: Method; path: Path; responses: Responses } {
  return spec;
}

/** The statuses a route's refusals can carry, in order. */
export function refusalStatuses(route: RouteSpec): number[] {
  const statuses = new Set<number>(route.errors ?? []);
  if (route.params || route.query || route.body) statuses.add(400);
  // Any credential can be refused with 403: a revoked key, a missing scope, a caller this route is not for.
  if (route.auth.kind !== 'none') {
    statuses.add(401);
    statuses.add(403);
    // Every keyed route counts against the caller's request bucket.
    statuses.add(429);
  }
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

/** `/v1/keys/{id}` → `/v1/keys/:id` (Express). */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

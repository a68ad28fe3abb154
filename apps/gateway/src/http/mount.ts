import type { NextFunction, Request, Response, Router } from 'express';
import type { z } from 'zod';
import { expressPath, type RouteSpec } from '@sbc/api';
import { ApiError, issuesFromSchema, type Issue } from '@sbc/errors';
import type { CallOptions } from '@sbc/rpc';
import { actorOf } from '../auth/actor';
import { principalOf, type Authorize } from '../auth/authorize';
import type { Principal } from '../auth/authenticator';
import { jsonBody, jsonBodyWithin } from './json-body';

type Parsed<T> = NonNullable<T> extends z.ZodType ? z.output<NonNullable<T>> : undefined;

/** What a route handler receives: its input already validated by the route's own schemas. */
export interface RouteInput<R extends RouteSpec> {
  params: Parsed<R['params']>;
  query: Parsed<R['query']>;
  body: Parsed<R['body']>;
  /** Set on every route that takes a credential. */
  principal: Principal;
  requestId: string;
  /**
   * Options for the calls this route makes: its request id, and on a write with a credential the actor, so a change
   * is recorded in the audit log with who made it and from where.
   */
  rpc: CallOptions;
  req: Request;
  res: Response;
}

/**
 * The app setting (`app.locals`) that resolves once a write's fan-out has reached this edge (PubSub.barrier):
 * every route but a GET awaits it before answering, so a key revoked, a member removed or an endpoint deleted
 * is refused by the next request this edge serves, not once the message happens to arrive.
 */
export const WRITE_BARRIER = 'writeBarrier';

/** A handler's answer: a status and a JSON body (none for 204). A handler that wrote `res` itself returns nothing. */
export type RouteResult = { status: number; body?: unknown } | void;

function parsePart(schema: z.ZodType | undefined, value: unknown, where: string, issues: Issue[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  issues.push(
    ...issuesFromSchema(result.error.issues).map((issue) => (issue.path === '' ? { ...issue, path: where } : issue)),
  );
  return undefined;
}

/**
 * Mounts one route on an Express router: the credential and scopes the route names, then its body read
 * (REST_MAX_BODY_BYTES at most), then its path, query and body parsed by the route's schemas (every
 * problem in one 400 `invalid_request`, `param` the first), then the handler. The same RouteSpec is what
 * /docs/openapi.json documents.
 */
export function mount<R extends RouteSpec>(
  router: Router,
  route: R,
  authorize: Authorize,
  handler: (input: RouteInput<R>) => Promise<RouteResult>,
): void {
  const validate = (req: Request, res: Response, next: NextFunction) => {
    const issues: Issue[] = [];
    const params = parsePart(route.params, req.params, 'path', issues);
    const query = parsePart(route.query, req.query, 'query', issues);
    const body = parsePart(route.body, req.body, 'body', issues);
    if (issues.length > 0) throw ApiError.invalid(issues);
    const principal = route.auth.kind === 'none' ? (req.principal as Principal) : principalOf(req);
    const input = {
      params,
      query,
      body,
      principal,
      requestId: req.requestId,
      // Only writes change anything the audit log records.
      rpc: {
        requestId: req.requestId,
        ...(principal && route.method !== 'get' ? { actor: actorOf(req, principal) } : {}),
      },
      req,
      res,
    } as RouteInput<R>;
    handler(input).then(async (result) => {
      if (route.method !== 'get') await (req.app.locals[WRITE_BARRIER] as (() => Promise<void>) | undefined)?.();
      if (!result) return;
      if (result.body === undefined) {
        res.status(result.status).end();
        return;
      }
      // Every account-surface object carries the request id (extra fields are allowed everywhere).
      const body =
        result.body !== null && typeof result.body === 'object' && !Array.isArray(result.body)
          ? { ...result.body, request_id: req.requestId }
          : result.body;
      res.status(result.status).json(body);
    }, next);
  };
  const path = expressPath(route.path);
  // The body is read only by routes that take one, and only once the caller's credential has passed.
  const read = route.body ? [route.maxBodyBytes ? jsonBodyWithin(route.maxBodyBytes) : jsonBody] : [];
  if (route.auth.kind === 'none') router[route.method](path, ...read, validate);
  else router[route.method](path, authorize(route.auth, { rateCost: route.rateCost }), ...read, validate);
}

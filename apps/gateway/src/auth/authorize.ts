import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '@sbc/errors';
import type { RouteAuth } from '@sbc/api';
import { missingScopes, OPERATOR_SCOPES, type Scope } from '@sbc/scopes';
import type { Authenticator, Principal } from './authenticator';
import { isSafeMethod, isSameOriginRequest } from './console-cookie';
import { readCredential } from './credentials';
import type { KeyUseRecorder } from './key-use';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/** The principal an `authorize` middleware attached; routes behind it can rely on it. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('route is missing its authorize() middleware');
  return req.principal;
}

export interface AuthorizeDeps {
  authenticator: Authenticator;
  keyUse: KeyUseRecorder;
}

/** The request bucket every keyed REST route counts against (limits/rate-limit.ts); returns its headers. */
export type RateLimit = (principal: Principal, cost?: number) => Promise<Record<string, string>>;

/**
 * Authenticates a request's credential and checks the route's scopes: 401 for a missing, malformed or
 * unknown credential; 403 `insufficient_scope` (with `required_scopes`) for a revoked key or a missing scope.
 * Sessions and device tokens pass scoped routes unnarrowed, except the operator scopes, which only an
 * operator holds. Shared by the REST routes (as middleware) and
 * the model routes (called directly on their lean path). A write made with the console's session cookie must
 * come from the console's own origin (403 otherwise); `method` defaults to a write.
 */
export async function authorizeRequest(
  deps: AuthorizeDeps,
  headers: IncomingHttpHeaders,
  requestId: string,
  required: Scope[],
  method = 'POST',
): Promise<Principal> {
  const credential = readCredential(headers as Parameters<typeof readCredential>[0]);
  if (credential.via === 'cookie' && !isSafeMethod(method) && !isSameOriginRequest(headers)) {
    throw new ApiError(
      'insufficient_scope',
      'A write signed in by the console cookie must come from the console itself (a same-origin request).',
      { extra: { required_scopes: required } },
    );
  }
  const principal = await deps.authenticator.authenticate(credential.secret, requestId);
  if (principal.revoked) {
    throw new ApiError('insufficient_scope', 'This key has been revoked.', { extra: { required_scopes: required } });
  }
  // Operator scopes are held by operators alone, sessions and device tokens included.
  const reserved = principal.operator ? [] : required.filter((scope) => OPERATOR_SCOPES.includes(scope));
  if (reserved.length > 0) {
    throw new ApiError('insufficient_scope', `Only the service's operators hold ${reserved.join(', ')}.`, {
      extra: { required_scopes: required },
    });
  }
  if (principal.scopes !== 'unrestricted') {
    const missing = missingScopes(principal.scopes, required);
    if (missing.length > 0) {
      throw new ApiError(
        'insufficient_scope',
        `This key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
        {
          extra: { required_scopes: required },
        },
      );
    }
  }
  if (principal.key) deps.keyUse.touch(principal.key.id);
  return principal;
}

/** Whether the caller holds every one of `scopes` (sessions and device tokens hold all but the operators'). */
export function holdsScopes(principal: Principal, scopes: Scope[]): boolean {
  return principal.scopes === 'unrestricted' || missingScopes(principal.scopes, scopes).length === 0;
}

/** Refuses a caller without `scopes` for part of a route (403 `insufficient_scope`, naming them). */
export function requireScopes(principal: Principal, scopes: Scope[], what: string): void {
  if (holdsScopes(principal, scopes)) return;
  throw new ApiError('insufficient_scope', `${what} needs the scope ${scopes.join(', ')}.`, {
    extra: { required_scopes: scopes },
  });
}

/**
 * Middleware for a route's credential rule: a list of scopes (`[]` = any credential) or a RouteAuth, where
 * `session` admits only a signed-in session (what a key or device may never do, such as approving a pairing).
 */
export function createAuthorize(deps: AuthorizeDeps & { rateLimit: RateLimit }) {
  return (rule: Scope[] | Exclude<RouteAuth, { kind: 'none' }>, options: { rateCost?: number } = {}) => {
    const required = Array.isArray(rule) ? rule : rule.kind === 'scoped' ? rule.scopes : [];
    const sessionOnly = !Array.isArray(rule) && rule.kind === 'session';
    return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      const principal = await authorizeRequest(deps, req.headers, req.requestId, required, req.method);
      if (sessionOnly && principal.kind !== 'session') {
        throw new ApiError(
          'insufficient_scope',
          'This route needs a signed-in session (POST /v1/auth/sessions), not a key or device token.',
          { extra: { required_scopes: [] } },
        );
      }
      // The same bucket as the caller's model calls; a refusal carries its headers into the envelope.
      res.set(await deps.rateLimit(principal, options.rateCost ?? 1));
      req.principal = principal;
      next();
    };
  };
}

export type Authorize = ReturnType<typeof createAuthorize>;

import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '@sbc/errors';
import { missingScopes, type Scope } from '@sbc/scopes';
import type { Authenticator, Principal } from './authenticator';
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

/**
 * Authenticates the request and checks the route's scopes: 401 for a missing, malformed or unknown
 * credential; 403 `insufficient_scope` (with `required_scopes`) for a revoked key or a missing scope.
 * Sessions and device tokens pass scoped routes unnarrowed.
 */
export function createAuthorize(deps: { authenticator: Authenticator; keyUse: KeyUseRecorder }) {
  return (required: Scope[]) =>
    async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
      const credential = readCredential(req.headers as Parameters<typeof readCredential>[0]);
      const principal = await deps.authenticator.authenticate(credential.secret, req.requestId);
      if (principal.revoked) {
        throw new ApiError('insufficient_scope', 'This key has been revoked.', { extra: { required_scopes: required } });
      }
      if (principal.scopes !== 'unrestricted') {
        const missing = missingScopes(principal.scopes, required);
        if (missing.length > 0) {
          throw new ApiError('insufficient_scope', `This key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`, {
            extra: { required_scopes: required },
          });
        }
      }
      if (principal.key) deps.keyUse.touch(principal.key.id);
      req.principal = principal;
      next();
    };
}

export type Authorize = ReturnType<typeof createAuthorize>;

import { Router } from 'express';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { authRoutes as specs } from '@sbc/api';
import { hashSecret } from '@sbc/ids';
import type { SessionService, User } from '@sbc/proto/sbc/account/v1/sessions_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { readCredential } from '../auth/credentials';
import { mount } from '../http/mount';
import type { SignInThrottle } from '../limits/sign-in-throttle';

function iso(value: Timestamp | undefined): string | undefined {
  return value ? timestampDate(value).toISOString() : undefined;
}

function renderUser(user: User): Record<string, unknown> {
  return { id: user.id, object: 'user', email: user.email, created_at: iso(user.createdAt) };
}

/**
 * Sign-up, sign-in and sign-out (CONTRACTS "Identity"). Passwords go straight to the account service and
 * tokens straight back to the caller; neither is logged.
 */
export function authRoutes(deps: { authorize: Authorize; sessions: RpcClientOf<typeof SessionService>; throttle: SignInThrottle }): Router {
  const router = Router();

  mount(router, specs.signUp, deps.authorize, async ({ body, req, requestId }) => {
    await deps.throttle.signUp(deps.throttle.addressOf(req));
    const reply = await deps.sessions.signUp({ email: body.email, password: body.password }, { requestId });
    return { status: 201, body: { user: renderUser(reply.user!) } };
  });

  mount(router, specs.createSession, deps.authorize, async ({ body, req, requestId }) => {
    const reply = await deps.throttle.signIn(body.email, deps.throttle.addressOf(req), () => deps.sessions.createSession({ email: body.email, password: body.password }, { requestId }));
    return { status: 201, body: { token: reply.token, expires_at: iso(reply.expiresAt), user: renderUser(reply.user!) } };
  });

  mount(router, specs.endCurrentSession, deps.authorize, async ({ principal, req, requestId }) => {
    // The principal does not carry its token; the session is the one this request presented.
    const tokenSha256 = hashSecret(readCredential(req.headers).secret);
    await deps.sessions.endSession({ userId: principal.userId, tokenSha256 }, { requestId });
    return { status: 204 };
  });

  return router;
}

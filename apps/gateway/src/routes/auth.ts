import { Router } from 'express';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { authRoutes as specs } from '@sbc/api';
import { hashSecret } from '@sbc/ids';
import type { SessionService, User } from '@sbc/proto/sbc/account/v1/sessions_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { ApiError } from '@sbc/errors';
import { clearedSessionCookies, isSameOriginRequest, sessionCookies } from '../auth/console-cookie';
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
export function authRoutes(deps: {
  baseUrl: string;
  authorize: Authorize;
  sessions: RpcClientOf<typeof SessionService>;
  throttle: SignInThrottle;
}): Router {
  const router = Router();
  const secure = deps.baseUrl.startsWith('https:');

  mount(router, specs.signUp, deps.authorize, async ({ body, req, requestId }) => {
    await deps.throttle.signUp(deps.throttle.addressOf(req));
    const reply = await deps.sessions.signUp({ email: body.email, password: body.password }, { requestId });
    return { status: 201, body: { user: renderUser(reply.user!) } };
  });

  mount(router, specs.createSession, deps.authorize, async ({ body, req, requestId }) => {
    const reply = await deps.throttle.signIn(body.email, deps.throttle.addressOf(req), () =>
      deps.sessions.createSession({ email: body.email, password: body.password }, { requestId }),
    );
    return {
      status: 201,
      body: { token: reply.token, expires_at: iso(reply.expiresAt), user: renderUser(reply.user!) },
    };
  });

  mount(router, specs.endCurrentSession, deps.authorize, async ({ principal, req, res, requestId }) => {
    // The principal does not carry its token; the session is the one this request presented.
    const tokenSha256 = hashSecret(readCredential(req.headers).secret);
    await deps.sessions.endSession({ userId: principal.userId, tokenSha256 }, { requestId });
    res.setHeader('set-cookie', clearedSessionCookies(secure));
    return { status: 204 };
  });

  mount(router, specs.createConsoleSession, deps.authorize, async ({ body, req, res, requestId }) => {
    // A cross-site page must not sign a visitor in to someone else's account (login CSRF).
    if (!isSameOriginRequest(req.headers))
      throw new ApiError(
        'insufficient_scope',
        'Sign in to the console from the console itself (a same-origin request).',
        { extra: { required_scopes: [] } },
      );
    const reply = await deps.throttle.signIn(body.email, deps.throttle.addressOf(req), () =>
      deps.sessions.createSession({ email: body.email, password: body.password }, { requestId }),
    );
    const expiresAt = timestampDate(reply.expiresAt!);
    res.setHeader('set-cookie', sessionCookies(reply.token, expiresAt, new Date(), secure));
    res.setHeader('cache-control', 'no-store');
    return {
      status: 201,
      body: { object: 'console_session', user: renderUser(reply.user!), expires_at: expiresAt.toISOString() },
    };
  });

  mount(router, specs.getConsoleSession, deps.authorize, async ({ principal }) => {
    return {
      status: 200,
      body: { object: 'console_session', user: { id: principal.userId }, operator: principal.operator },
    };
  });

  return router;
}

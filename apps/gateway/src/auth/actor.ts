import type { Request } from 'express';
import type { Actor } from '@sbc/rpc';
import type { Principal } from './authenticator';

/**
 * The app setting (`app.locals`) that resolves a request's client address the way the sign-in throttle does
 * (TRUSTED_PROXY_HOPS), for the audit log.
 */
export const CLIENT_ADDRESS = 'clientAddress';

/** Who is making a change, for the audit log: the user, the key, session or device they used, and their address. */
export function actorOf(req: Request, principal: Principal): Actor {
  const addressOf = req.app.locals[CLIENT_ADDRESS] as ((req: Request) => string) | undefined;
  const actor: Actor = { userId: principal.userId, ip: addressOf?.(req) ?? req.socket.remoteAddress };
  if (principal.key) actor.keyId = principal.key.id;
  if (principal.session) actor.session = principal.session;
  if (principal.deviceId) actor.deviceId = principal.deviceId;
  return actor;
}

import type { Request } from 'express';
import { hashSecretHex } from '@sbc/ids';
import type { Actor } from '@sbc/rpc';
import type { Principal } from './authenticator';
import { readCredential } from './credentials';

/**
 * The app setting (`app.locals`) that resolves a request's client address the way the sign-in throttle does
 * (TRUSTED_PROXY_HOPS), for the audit log.
 */
export const CLIENT_ADDRESS = 'clientAddress';

/** Characters of the session token's SHA-256 that name a session in the audit log: enough to tell sessions apart. */
const SESSION_HANDLE_HEX = 16;

/**
 * Who is making a change, for the audit log: the user, and the key, session or device they used, and their address.
 * A session is named by the start of its token's hash, which tells sign-ins apart and reveals nothing of the token.
 */
export function actorOf(req: Request, principal: Principal): Actor {
  const addressOf = req.app.locals[CLIENT_ADDRESS] as ((req: Request) => string) | undefined;
  const actor: Actor = { userId: principal.userId, ip: addressOf?.(req) ?? req.socket.remoteAddress };
  if (principal.key) actor.keyId = principal.key.id;
  if (principal.deviceId) actor.deviceId = principal.deviceId;
  if (principal.kind === 'session')
    actor.session = `ses_${hashSecretHex(readCredential(req.headers).secret).slice(0, SESSION_HANDLE_HEX)}`;
  return actor;
}

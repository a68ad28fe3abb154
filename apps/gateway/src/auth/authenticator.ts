import { ApiError } from '@sbc/errors';
import { KEY_REVOKED_CHANNEL } from '@sbc/events';
import { hashSecretHex } from '@sbc/ids';
import type { LocalCache, PubSub } from '@sbc/cache';
import type { Logger } from '@sbc/logging';
import { PrincipalKind, type AccountService, type CallerKey } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { isScope, type Scope } from '@sbc/scopes';
import type { TeamCaps } from '@sbc/proto/sbc/account/v1/teams_pb';
import type { Guardrail } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import { compileGuardrails, type PrincipalGuardrails } from '../guardrails/edge-guardrails';
import { teamSpendCapsOf, type TeamSpendCaps } from '../limits/team-caps';
import type { CredentialKind } from './credentials';

/** Who is calling, as the edge caches it. */
export interface Principal {
  kind: CredentialKind;
  userId: string;
  /** Set for caller keys. */
  key?: CallerKey;
  /** Set for team keys: the team's and the member's spend caps, read once with the key. */
  teamCaps?: TeamSpendCaps;
  /** Set for keys whose account or team has guardrails: compiled once, cached with the key. */
  guardrails?: PrincipalGuardrails;
  /** Set for device tokens: the paired device. */
  deviceId?: string;
  /**
   * Set for sessions: `ses_` and the start of the token's SHA-256, which tells sign-ins apart in the audit log and
   * reveals nothing of the token.
   */
  session?: string;
  /** Effective scopes of a key; sessions and device tokens are not narrowed by scopes. */
  scopes: Scope[] | 'unrestricted';
  revoked: boolean;
  /**
   * One of the service's operators, as the account service decided: only they hold builds:admin (whatever the
   * credential) and reach the operator routes.
   */
  operator: boolean;
}

export interface Authenticator {
  /** Resolves a secret to its principal, from the local cache when fresh; unknown secrets are 401. */
  authenticate(secret: string, requestId: string): Promise<Principal>;
  /** Subscribes to revocations so every replica drops a revoked key, ended session or unlinked device at once. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Characters of a session token's SHA-256 that name the session in the audit log: enough to tell sessions apart. */
const SESSION_HANDLE_HEX = 16;

function toPrincipal(
  found: {
    kind: PrincipalKind;
    userId: string;
    key?: CallerKey;
    deviceId: string;
    operator: boolean;
    teamCaps?: TeamCaps;
    guardrails: Guardrail[];
    attachedGuardrailIds: string[];
  },
  hashHex: string,
): Principal {
  const { kind, userId, key, operator } = found;
  if (kind === PrincipalKind.KEY && key) {
    return {
      kind: 'key',
      userId,
      key,
      teamCaps: teamSpendCapsOf(found.teamCaps),
      guardrails: compileGuardrails(found.guardrails, found.attachedGuardrailIds),
      scopes: key.scopes.filter(isScope),
      revoked: key.revokedAt !== undefined,
      operator,
    };
  }
  if (kind === PrincipalKind.DEVICE)
    return { kind: 'device', userId, deviceId: found.deviceId, scopes: 'unrestricted', revoked: false, operator };
  return {
    kind: 'session',
    userId,
    session: `ses_${hashHex.slice(0, SESSION_HANDLE_HEX)}`,
    scopes: 'unrestricted',
    revoked: false,
    operator,
  };
}

export function createAuthenticator(deps: {
  account: RpcClientOf<typeof AccountService>;
  cache: LocalCache<Principal | null>;
  pubsub: PubSub;
  logger: Logger;
}): Authenticator {
  let unsubscribe: (() => Promise<void> | void) | undefined;
  return {
    async authenticate(secret, requestId) {
      const hashHex = hashSecretHex(secret);
      const principal = await deps.cache.swr(hashHex, async () => {
        try {
          const reply = await deps.account.authenticateCredential(
            { secretSha256: Buffer.from(hashHex, 'hex') },
            { requestId },
          );
          const found = reply.principal;
          return found ? toPrincipal(found, hashHex) : null;
        } catch (error) {
          if (error instanceof ApiError && error.code === 'unauthorized') return null;
          throw error;
        }
      });
      if (!principal) throw new ApiError('unauthorized', 'The credential is not recognised.');
      return principal;
    },
    async start() {
      unsubscribe = await deps.pubsub.subscribe(KEY_REVOKED_CHANNEL, (hashHex) => {
        deps.cache.delete(hashHex);
        deps.logger.debug('revoked key dropped from the authentication cache');
      });
    },
    async stop() {
      await unsubscribe?.();
    },
  };
}

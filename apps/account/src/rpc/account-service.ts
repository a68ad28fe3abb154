import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { ApiError } from '@sbc/errors';
import { KEY_REVOKED_CHANNEL } from '@sbc/events';
import type { PubSub } from '@sbc/cache';
import type { AccountConfig } from '../config';
import type { Logger } from '@sbc/logging';
import { AccountService, PrincipalKind, type CallerKeySchema } from '@sbc/proto/sbc/account/v1/account_pb';
import { effectiveScopes } from '@sbc/scopes';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import type { SecretCipher } from '../store/secrets';
import { findCredentialOwner } from '../store/credentials';
import { recordKeyUse, revokeKey, type CallerKeyRow } from '../store/keys';
import type { RpcImplementation } from '@sbc/rpc';
import { getRoutingTable } from './routing';

/** What every RPC service of the account app is built from (main.ts wires one set for all). */
export interface AccountServiceDeps {
  db: AccountDb;
  config?: AccountConfig;
  pubsub: PubSub;
  /** Opens upstream API keys and headers for GetRoutingTable. */
  cipher: SecretCipher;
  logger?: Logger;
  now?: () => Date;
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : null;
}

export function toProtoKey(row: CallerKeyRow): MessageInitShape<typeof CallerKeySchema> {
  const allowed = stringList(row.allowedModels);
  return {
    id: row.id,
    userId: row.userId,
    name: row.name,
    mask: row.mask,
    createdAt: timestampFromDate(row.createdAt),
    lastUsedAt: row.lastUsedAt ? timestampFromDate(row.lastUsedAt) : undefined,
    revokedAt: row.revokedAt ? timestampFromDate(row.revokedAt) : undefined,
    dailyLimitCredits: row.dailyLimitCredits === null ? undefined : BigInt(row.dailyLimitCredits),
    monthlyLimitCredits: row.monthlyLimitCredits === null ? undefined : BigInt(row.monthlyLimitCredits),
    allowedModels: allowed === null ? undefined : { values: allowed },
    route: row.route,
    mode: row.mode,
    incognito: row.incognito,
    deviceId: row.deviceId ?? undefined,
    orgId: row.orgId ?? undefined,
    scopes: effectiveScopes(stringList(row.scopes), { teamKey: row.orgId !== null }),
  };
}

export function createAccountService(deps: AccountServiceDeps): RpcImplementation<typeof AccountService> {
  const now = deps.now ?? (() => new Date());
  return {
    async authenticateCredential(request) {
      if (request.secretSha256.length !== 32) {
        throw new ApiError('invalid_request', 'secret_sha256 must be 32 bytes', { param: 'secret_sha256' });
      }
      const owner = await findCredentialOwner(deps.db, Buffer.from(request.secretSha256), now());
      if (!owner) throw new ApiError('unauthorized', 'Unknown credential.');
      if (owner.kind === 'key') return { principal: { kind: PrincipalKind.KEY, userId: owner.key.userId, key: toProtoKey(owner.key) } };
      if (owner.kind === 'session') return { principal: { kind: PrincipalKind.SESSION, userId: owner.userId } };
      return { principal: { kind: PrincipalKind.DEVICE, userId: owner.userId, deviceId: owner.deviceId } };
    },

    async revokeKey(request) {
      const key = await revokeKey(deps.db, request.userId, request.keyId, now());
      if (!key) throw new ApiError('not_found', 'No such key on this account.', { param: 'id' });
      await deps.pubsub.publish(KEY_REVOKED_CHANNEL, Buffer.from(key.keyHash).toString('hex'));
      return { key: toProtoKey(key) };
    },

    async recordKeyUse(request) {
      await recordKeyUse(
        deps.db,
        request.uses.filter((use) => use.usedAt).map((use) => ({ keyId: use.keyId, usedAt: timestampDate(use.usedAt!) })),
      );
      return {};
    },

    getRoutingTable(request, ctx) {
      return getRoutingTable(deps, request, ctx.requestId);
    },
  };
}

import { timestampDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import { KEY_REVOKED_CHANNEL } from '@sbc/events';
import type { PubSub } from '@sbc/cache';
import { hashSecret, maskSecret, newId, newSecret } from '@sbc/ids';
import type { Logger } from '@sbc/logging';
import { MAX_PAGE_LIMIT } from '@sbc/pagination';
import { AccountService, PrincipalKind, type KeyCaller } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { AccountConfig } from '../config';
import type { Operators } from '../operators';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import type { SecretCipher } from '../store/secrets';
import { findCredentialOwner } from '../store/credentials';
import { createKey, findOwnKey, keyChange, listKeys, recordKeyUse, revokeKey, updateKey } from '../store/keys';
import {
  batchIdOfCreate,
  checkOverTarget,
  checkReferences,
  checkSettings,
  checkWithinCaller,
  settingsOfCreate,
  settingsOfUpdate,
  toProtoKey,
} from './key-settings';
import { teamCapsOf } from '../store/team-budgets';
import { guardrailsOfKey } from '../store/guardrails';
import { openWebhookSecret, toProtoGuardrail } from './guardrail-messages';
import { toProtoBudget } from './budgets';
import { getRoutingTable } from './routing';
import { actorOf } from './audit';
import { appendAuditEvent } from '../store/audit';

/** What every RPC service of the account app is built from (main.ts wires one set for all). */
export interface AccountServiceDeps {
  db: AccountDb;
  config?: AccountConfig;
  /** Who the service's operators are: decided here and carried on the principal. */
  operators: Operators;
  pubsub: PubSub;
  /** Opens upstream API keys and headers for GetRoutingTable. */
  cipher: SecretCipher;
  logger?: Logger;
  now?: () => Date;
}

function callerOf(request: { caller?: KeyCaller }): KeyCaller {
  if (!request.caller?.userId)
    throw new ApiError('invalid_request', 'caller.user_id is required.', { param: 'caller' });
  return request.caller;
}

export function createAccountService(deps: AccountServiceDeps): RpcImplementation<typeof AccountService> {
  const now = deps.now ?? (() => new Date());
  // Every edge caches credentials by hash; a changed or revoked key must be dropped everywhere at once.
  const dropCached = (keyHash: Uint8Array) =>
    deps.pubsub.publish(KEY_REVOKED_CHANNEL, Buffer.from(keyHash).toString('hex'));
  return {
    async authenticateCredential(request) {
      if (request.secretSha256.length !== 32) {
        throw new ApiError('invalid_request', 'secret_sha256 must be 32 bytes', { param: 'secret_sha256' });
      }
      const owner = await findCredentialOwner(deps.db, Buffer.from(request.secretSha256), now());
      if (!owner) throw new ApiError('unauthorized', 'Unknown credential.');
      if (owner.kind === 'key') {
        const operator = deps.operators.isOperator(owner.key.userId);
        const teamId = owner.key.orgId;
        const caps = teamId === null ? undefined : await teamCapsOf(deps.db, teamId, owner.key.userId);
        const guardrails = await guardrailsOfKey(deps.db, owner.key);
        return {
          principal: {
            kind: PrincipalKind.KEY,
            userId: owner.key.userId,
            key: toProtoKey(owner.key, operator),
            operator,
            teamCaps: caps && {
              teamId: teamId!,
              team: toProtoBudget(caps.team),
              member: toProtoBudget(caps.member),
            },
            guardrails: guardrails.rows.map((row) => toProtoGuardrail(row, openWebhookSecret(deps.cipher, row))),
            attachedGuardrailIds: guardrails.attached,
          },
        };
      }
      const operator = deps.operators.isOperator(owner.userId);
      if (owner.kind === 'session')
        return { principal: { kind: PrincipalKind.SESSION, userId: owner.userId, operator } };
      return { principal: { kind: PrincipalKind.DEVICE, userId: owner.userId, deviceId: owner.deviceId, operator } };
    },

    async listKeys(request) {
      if (request.limit < 1 || request.limit > MAX_PAGE_LIMIT)
        throw new ApiError('invalid_request', `limit must be 1 to ${MAX_PAGE_LIMIT}.`, { param: 'limit' });
      const page = await listKeys(deps.db, request.userId, {
        limit: request.limit,
        after_id: request.afterId,
        before_id: request.beforeId,
      });
      const operator = deps.operators.isOperator(request.userId);
      return { keys: page.data.map((row) => toProtoKey(row, operator)), hasMore: page.has_more };
    },

    async createKey(request, ctx) {
      const caller = callerOf(request);
      const userId = caller.userId;
      const settings = settingsOfCreate(request);
      const batchId = batchIdOfCreate(request);
      const orgId = request.orgId ?? null;
      const operator = deps.operators.isOperator(userId);
      const parentKeyId = batchId === null ? null : (caller.keyId ?? null);
      if (parentKeyId !== null) {
        // A batch's key is paced within its creating key's limits (docs/batches.md "Pacing"), so it carries them.
        const parent = await findOwnKey(deps.db, userId, parentKeyId);
        settings.rpm ??= parent?.rpm ?? null;
        settings.tpm ??= parent?.tpm ?? null;
      }
      checkSettings(settings);
      await checkWithinCaller(deps.db, caller, settings, orgId, operator);
      await checkReferences(deps.db, userId, settings, orgId);
      const secret = newSecret('sbc');
      const key = await deps.db.$transaction(async (tx) => {
        const created = await createKey(tx, {
          ...settings,
          id: newId('key'),
          userId,
          orgId,
          keyHash: hashSecret(secret),
          mask: maskSecret(secret),
          batchId,
          parentKeyId,
        });
        await appendAuditEvent(tx, actorOf(ctx, userId), keyChange('key.create', null, created));
        return created;
      });
      return { key: toProtoKey(key, operator), secret };
    },

    async updateKey(request, ctx) {
      const caller = callerOf(request);
      const userId = caller.userId;
      const row = await findOwnKey(deps.db, userId, request.keyId);
      if (!row) throw new ApiError('not_found', 'No such key on this account.', { param: 'id' });
      const revoked = () =>
        new ApiError('conflict', 'This key is revoked; a revoked key cannot be changed.', { param: 'id' });
      if (row.revokedAt) throw revoked();
      const operator = deps.operators.isOperator(userId);
      await checkOverTarget(deps.db, caller, row, operator);
      const settings = settingsOfUpdate(row, request, operator);
      checkSettings(settings);
      await checkWithinCaller(deps.db, caller, settings, row.orgId, operator);
      await checkReferences(deps.db, userId, settings, null);
      const key = await deps.db.$transaction(async (tx) => {
        const updated = await updateKey(tx, userId, row.id, settings);
        if (updated) await appendAuditEvent(tx, actorOf(ctx, userId), keyChange('key.update', row, updated));
        return updated;
      });
      if (!key) throw revoked();
      await dropCached(key.keyHash);
      return { key: toProtoKey(key, operator) };
    },

    async revokeKey(request, ctx) {
      const notFound = () => new ApiError('not_found', 'No such key on this account.', { param: 'id' });
      const target = await findOwnKey(deps.db, request.userId, request.keyId);
      if (!target) throw notFound();
      const operator = deps.operators.isOperator(request.userId);
      await checkOverTarget(deps.db, { userId: request.userId, keyId: request.callerKeyId }, target, operator);
      const at = now();
      const key = await deps.db.$transaction(async (tx) => {
        const revoked = await revokeKey(tx, request.userId, request.keyId, at);
        // Revoking a key already revoked (before, or by a call racing this one) changes nothing, so records nothing.
        if (revoked?.revokedAt?.getTime() === at.getTime())
          await appendAuditEvent(tx, actorOf(ctx, request.userId), keyChange('key.revoke', target, revoked));
        return revoked;
      });
      if (!key) throw notFound();
      await dropCached(key.keyHash);
      return { key: toProtoKey(key, operator) };
    },

    async recordKeyUse(request) {
      await recordKeyUse(
        deps.db,
        request.uses
          .filter((use) => use.usedAt)
          .map((use) => ({ keyId: use.keyId, usedAt: timestampDate(use.usedAt!) })),
      );
      return {};
    },

    getRoutingTable(request, ctx) {
      return getRoutingTable(deps, request, ctx.requestId);
    },
  };
}

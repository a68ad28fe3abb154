import { ApiError } from '@sbc/errors';
import { KEY_REVOKED_CHANNEL } from '@sbc/events';
import { checkGuardrailConfig, checkSides } from '@sbc/guardrails';
import { newId } from '@sbc/ids';
import type { GuardrailService } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import type { RpcImplementation } from '@sbc/rpc';
import { newWebhookSecret } from '@sbc/webhooks';
import type { Prisma } from '../generated/prisma/client';
import {
  checkAttachable,
  countGuardrails,
  detachEverywhere,
  findVisibleGuardrail,
  keyHashesOf,
  listGuardrails,
  MAX_GUARDRAILS,
  teamGuardrailsAmong,
  type GuardrailOwner,
  type GuardrailRow,
} from '../store/guardrails';
import { findOwnKey } from '../store/keys';
import { checkOverTarget } from './key-settings';
import { refuse, seatOf } from '../store/teams';
import { refuseTeamUpdate } from '../teams/permissions';
import type { AccountServiceDeps } from './account-service';
import { secretContext, toProtoGuardrail } from './guardrail-messages';

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 100)
    throw ApiError.invalid([{ path: 'name', code: 'invalid_value', message: 'name must be 1 to 100 characters.' }]);
  return trimmed;
}

function checkedConfig(kind: string, json: string): Prisma.InputJsonValue {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  const checked = checkGuardrailConfig(kind, value);
  if (!('config' in checked))
    throw ApiError.invalid(checked.issues.map((issue) => ({ ...issue, code: 'invalid_value' })));
  return checked.config as unknown as Prisma.InputJsonValue;
}

function checkedSides(values: readonly string[]): string[] {
  const checked = checkSides(values);
  if ('issues' in checked) throw ApiError.invalid(checked.issues.map((issue) => ({ ...issue, code: 'invalid_value' })));
  return checked.sides;
}

/**
 * Guardrails: the account's and its teams', and which keys and teams they are attached to. A team's guardrails are
 * read by its members and written by its owners and admins. Every write drops the cached principal of every key
 * whose calls may meet the guardrail, at every edge, so it takes effect on the next request.
 */
export function createGuardrailService(deps: AccountServiceDeps): RpcImplementation<typeof GuardrailService> {
  const dropKeys = async (owner: GuardrailOwner) => {
    for (const hash of await keyHashesOf(deps.db, owner))
      await deps.pubsub.publish(KEY_REVOKED_CHANNEL, Buffer.from(hash).toString('hex'));
  };
  const ownerOf = (row: GuardrailRow): GuardrailOwner =>
    row.orgId === null ? { userId: row.userId } : { userId: row.userId, teamId: row.orgId };
  /** The row, once the caller may change it: their own, or their team's when they own or administer it. */
  const writable = async (userId: string, id: string) => {
    const row = await findVisibleGuardrail(deps.db, userId, id);
    if (row.orgId !== null) refuse(refuseTeamUpdate((await seatOf(deps.db, row.orgId, userId)).role));
    return row;
  };
  return {
    async listGuardrails({ userId, teamId }) {
      if (teamId !== undefined) await seatOf(deps.db, teamId, userId);
      const rows = await listGuardrails(deps.db, teamId === undefined ? { userId } : { userId, teamId });
      return { guardrails: rows.map((row) => toProtoGuardrail(row)) };
    },

    async createGuardrail(request) {
      const { userId, teamId } = request;
      if (teamId !== undefined) refuse(refuseTeamUpdate((await seatOf(deps.db, teamId, userId)).role));
      const owner: GuardrailOwner = teamId === undefined ? { userId } : { userId, teamId };
      const name = checkedName(request.name);
      const config = checkedConfig(request.kind, request.configJson);
      const appliesTo = checkedSides(request.appliesTo);
      if ((await countGuardrails(deps.db, owner)) >= MAX_GUARDRAILS)
        throw new ApiError('conflict', `An account or team keeps at most ${MAX_GUARDRAILS} guardrails.`);
      const id = newId('grd');
      const secret = request.kind === 'webhook' ? newWebhookSecret() : undefined;
      const row = await deps.db.guardrail.create({
        data: {
          id,
          userId,
          orgId: teamId ?? null,
          name,
          kind: request.kind,
          config,
          appliesTo,
          webhookSecret: secret === undefined ? null : deps.cipher.encrypt(secret, secretContext(id)),
        },
      });
      await dropKeys(owner);
      return { guardrail: toProtoGuardrail(row, secret) };
    },

    async getGuardrail({ userId, guardrailId }) {
      return { guardrail: toProtoGuardrail(await findVisibleGuardrail(deps.db, userId, guardrailId)) };
    },

    async updateGuardrail(request) {
      const row = await writable(request.userId, request.guardrailId);
      const updated = await deps.db.guardrail.update({
        where: { id: row.id },
        data: {
          ...(request.name === undefined ? {} : { name: checkedName(request.name) }),
          ...(request.configJson === undefined ? {} : { config: checkedConfig(row.kind, request.configJson) }),
          ...(request.appliesTo === undefined ? {} : { appliesTo: checkedSides(request.appliesTo.values) }),
          updatedAt: new Date(),
        },
      });
      await dropKeys(ownerOf(row));
      return { guardrail: toProtoGuardrail(updated) };
    },

    async deleteGuardrail({ userId, guardrailId }) {
      const row = await writable(userId, guardrailId);
      await deps.db.$transaction(async (tx) => {
        await detachEverywhere(tx, row.id);
        await tx.guardrail.delete({ where: { id: row.id } });
      });
      await dropKeys(ownerOf(row));
      return {};
    },

    async setKeyGuardrails({ userId, keyId, guardrailIds, mayChangeTeam, callerKeyId }) {
      const key = await findOwnKey(deps.db, userId, keyId);
      if (!key) throw new ApiError('not_found', 'No such key on this account.', { param: 'key_id' });
      // Never narrower over wider: checked here too, since the guardrails are set before the rest of the edit.
      await checkOverTarget(deps.db, { userId, keyId: callerKeyId }, key, deps.operators.isOperator(userId));
      const owners: GuardrailOwner[] = [{ userId }, ...(key.orgId ? [{ userId, teamId: key.orgId }] : [])];
      const ids = await checkAttachable(deps.db, guardrailIds, owners);
      // A team's guardrail on a team key is the team's policy: taking it off is changing the team's guardrails.
      const removed = key.guardrailIds.filter((id) => !ids.includes(id));
      if (key.orgId && removed.length > 0 && (await teamGuardrailsAmong(deps.db, removed, key.orgId))) {
        refuse(mayChangeTeam ? null : "Only a caller holding teams:write may take a team's guardrail off a key.");
        refuse(refuseTeamUpdate((await seatOf(deps.db, key.orgId, userId)).role));
      }
      await deps.db.callerKey.update({ where: { id: key.id }, data: { guardrailIds: ids } });
      await deps.pubsub.publish(KEY_REVOKED_CHANNEL, Buffer.from(key.keyHash).toString('hex'));
      return { guardrailIds: ids };
    },

    async setTeamGuardrails({ userId, teamId, guardrailIds }) {
      refuse(refuseTeamUpdate((await seatOf(deps.db, teamId, userId)).role));
      const ids = await checkAttachable(deps.db, guardrailIds, [{ userId, teamId }]);
      await deps.db.team.update({ where: { id: teamId }, data: { guardrailIds: ids } });
      await dropKeys({ userId, teamId });
      return { guardrailIds: ids };
    },
  };
}

import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { ApiError } from '@sbc/errors';
import { MAX_PAGE_LIMIT } from '@sbc/pagination';
import { AuditService, type AuditEventSchema } from '@sbc/proto/sbc/account/v1/audit_pb';
import type { Actor, RpcContext, RpcImplementation } from '@sbc/rpc';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import type { Operators } from '../operators';
import { appendAuditEvent, listAuditEvents, recorderFor, type AuditRow, type RecordChange } from '../store/audit';

/**
 * The actor of a change: the one the call carries (the edge's user, key or session, address), or for a call from
 * outside the edge's routes that carries none, the request's own user.
 */
export function actorOf(ctx: RpcContext, userId: string): Actor {
  return ctx.actor?.userId === userId ? ctx.actor : { userId };
}

/** Records the caller's change in the audit log, in the change's own transaction. */
export function recordAs(ctx: RpcContext, userId: string): RecordChange {
  return recorderFor(actorOf(ctx, userId));
}

const json = (value: unknown) => (value === null || value === undefined ? undefined : JSON.stringify(value));

function toProtoEvent(row: AuditRow): MessageInitShape<typeof AuditEventSchema> {
  return {
    id: row.id,
    at: timestampFromDate(row.at),
    actorUserId: row.actorUserId,
    actorKeyId: row.actorKeyId ?? undefined,
    actorSession: row.actorSession ?? undefined,
    actorDeviceId: row.actorDeviceId ?? undefined,
    ip: row.ip ?? undefined,
    action: row.action,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    beforeJson: json(row.before),
    afterJson: json(row.after),
  };
}

function parsedObject(text: string | undefined, param: string): object | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object') return value;
  } catch {
    // refused below
  }
  throw new ApiError('invalid_request', `${param} must be a JSON object.`, { param });
}

export function createAuditService(deps: {
  db: AccountDb;
  operators: Operators;
}): RpcImplementation<typeof AuditService> {
  return {
    async appendAuditEvent(request, ctx) {
      if (!ctx.actor) throw new ApiError('invalid_request', 'An audit record needs its actor.', { param: 'actor' });
      for (const [param, value] of [
        ['action', request.action],
        ['resource_type', request.resourceType],
        ['resource_id', request.resourceId],
        ['owner_user_id', request.ownerUserId],
      ] as const)
        if (!value) throw new ApiError('invalid_request', `${param} is required.`, { param });
      const row = await appendAuditEvent(deps.db, ctx.actor, {
        action: request.action,
        resourceType: request.resourceType,
        resourceId: request.resourceId,
        ownerUserId: request.ownerUserId,
        teamId: request.teamId,
        before: parsedObject(request.beforeJson, 'before_json'),
        after: parsedObject(request.afterJson, 'after_json'),
      });
      return { event: toProtoEvent(row) };
    },

    async listAuditEvents(request) {
      if (!request.userId) throw new ApiError('invalid_request', 'user_id is required.', { param: 'user_id' });
      if (request.limit < 1 || request.limit > MAX_PAGE_LIMIT)
        throw new ApiError('invalid_request', `limit must be 1 to ${MAX_PAGE_LIMIT}.`, { param: 'limit' });
      const page = await listAuditEvents(
        deps.db,
        { userId: request.userId, operator: deps.operators.isOperator(request.userId) },
        {
          actorUserId: request.actorUserId,
          action: request.action,
          resourceType: request.resourceType,
          resourceId: request.resourceId,
          from: request.from ? timestampDate(request.from) : undefined,
          to: request.to ? timestampDate(request.to) : undefined,
        },
        { limit: request.limit, after_id: request.afterId, before_id: request.beforeId },
      );
      return { events: page.data.map(toProtoEvent), hasMore: page.has_more };
    },
  };
}

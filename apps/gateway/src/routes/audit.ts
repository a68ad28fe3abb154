import { Router } from 'express';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { auditRoutes as specs } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import type { AuditEvent, AuditService } from '@sbc/proto/sbc/account/v1/audit_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { listEnvelope } from '@sbc/pagination';
import type { Authorize } from '../auth/authorize';
import { boundedInstant } from '../http/bounded-instant';
import { mount } from '../http/mount';

const snapshot = (json: string | undefined): unknown => (json === undefined ? null : JSON.parse(json));

/** CONTRACTS' audit record. */
function renderAuditEvent(event: AuditEvent) {
  return {
    id: event.id,
    object: 'audit_event' as const,
    actor: {
      user_id: event.actorUserId,
      ...(event.actorKeyId !== undefined ? { key_id: event.actorKeyId } : {}),
      ...(event.actorSession !== undefined ? { session: event.actorSession } : {}),
      ...(event.actorDeviceId !== undefined ? { device_id: event.actorDeviceId } : {}),
    },
    action: event.action,
    resource: { type: event.resourceType, id: event.resourceId },
    ip: event.ip ?? null,
    at: timestampDate(event.at!).toISOString(),
    changes: { before: snapshot(event.beforeJson), after: snapshot(event.afterJson) },
  };
}

/** GET /v1/audit, answered by the account service, which keeps the records and decides who reads which. */
export function auditRoutes(deps: { authorize: Authorize; audit: RpcClientOf<typeof AuditService> }): Router {
  const router = Router();

  mount(router, specs.listAuditEvents, deps.authorize, async ({ principal, query, requestId }) => {
    const from = query.from === undefined ? undefined : boundedInstant(new Date(query.from), 'from');
    const to = query.to === undefined ? undefined : boundedInstant(new Date(query.to), 'to');
    if (from && to && !(from < to)) throw new ApiError('invalid_request', 'from must be before to.', { param: 'from' });
    const reply = await deps.audit.listAuditEvents(
      {
        userId: principal.userId,
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        actorUserId: query.actor,
        action: query.action,
        resourceType: query.resource_type,
        resourceId: query.resource_id,
        from: from && timestampFromDate(from),
        to: to && timestampFromDate(to),
      },
      { requestId },
    );
    return {
      status: 200,
      body: listEnvelope(reply.events.map(renderAuditEvent), reply.hasMore, (event) => event.id),
    };
  });

  return router;
}

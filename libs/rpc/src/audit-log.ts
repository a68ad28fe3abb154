import type { Logger } from '@sbc/logging';
import type { AuditService } from '@sbc/proto/sbc/account/v1/audit_pb';
import type { RpcClientOf, RpcContext } from './types';

/** A change another service made, for the account service's audit log (CONTRACTS "Audit records"). */
export interface AuditedChange {
  action: string;
  resourceType: string;
  resourceId: string;
  /** The account the resource belongs to, which reads the record. */
  ownerUserId: string;
  /** The resource before and after; the account service masks secret-named fields, but leave secrets out. */
  before?: object | null;
  after?: object | null;
}

/** Where a service that does not own the audit log records the changes it makes. */
export interface AuditLog {
  /**
   * Appends the record of a change already committed, naming the actor the call carries (or, for a call from
   * outside the edge, the owner). The change lives in another database, so the two cannot share a transaction: a
   * record that cannot be appended is logged with everything it held, and the change stands.
   */
  record(ctx: RpcContext, change: AuditedChange): Promise<void>;
}

export function createAuditLog(deps: { client: RpcClientOf<typeof AuditService>; logger: Logger }): AuditLog {
  const json = (value: object | null | undefined) =>
    value === null || value === undefined ? undefined : JSON.stringify(value);
  return {
    async record(ctx, change) {
      try {
        await deps.client.appendAuditEvent(
          {
            action: change.action,
            resourceType: change.resourceType,
            resourceId: change.resourceId,
            ownerUserId: change.ownerUserId,
            beforeJson: json(change.before),
            afterJson: json(change.after),
          },
          { requestId: ctx.requestId, actor: ctx.actor ?? { userId: change.ownerUserId } },
        );
      } catch (error) {
        deps.logger.error(
          { requestId: ctx.requestId, err: error, audit: { ...change, actor: ctx.actor } },
          'an audit record could not be appended',
        );
      }
    },
  };
}

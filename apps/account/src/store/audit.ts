import { newId } from '@sbc/ids';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import type { Actor } from '@sbc/rpc';
import type { AuditEvent as AuditRow, Prisma, PrismaClient as AccountDb } from '../generated/prisma/client';
import { auditSnapshot } from './audit-snapshot';

export type { AuditRow };

/** The client an append runs on: the database, or better the transaction that makes the change. */
export type AuditDb = AccountDb | Prisma.TransactionClient;

/** What changed: the resource, whose it is, and the resource before and after (either absent). */
export interface AuditChange {
  action: string;
  resourceType: string;
  resourceId: string;
  /** The account the resource belongs to, which reads the record; null for a team's own settings and invites. */
  ownerUserId: string | null;
  /** The team the resource belongs to; its owners and admins read the record. */
  teamId?: string | null;
  before?: object | null;
  after?: object | null;
}

/**
 * Records a change inside the transaction that makes it, so a change is never without its record nor a record
 * without its change. Store functions that open their own transaction take one.
 */
export type RecordChange = (tx: AuditDb, change: AuditChange) => Promise<unknown>;

/** The recorder of one actor's changes. */
export function recorderFor(actor: Actor): RecordChange {
  return (tx, change) => appendAuditEvent(tx, actor, change);
}

/** What the service's operators change service-wide (X builds): every operator reads these records. */
const OPERATOR_RESOURCE_TYPES = ['x_build', 'x_builds_queue', 'x_builds_block'];

/** Roles whose holders read their team's records. */
const TEAM_AUDIT_ROLES = ['owner', 'admin'];

/**
 * Appends one record. There is no update or delete beside it (the table's trigger refuses both). The snapshots are
 * masked here, whatever the caller passed.
 */
export function appendAuditEvent(db: AuditDb, actor: Actor, change: AuditChange): Promise<AuditRow> {
  const snapshot = (value: object | null | undefined) =>
    value === undefined || value === null ? undefined : (auditSnapshot(value) as Prisma.InputJsonValue);
  return db.auditEvent.create({
    data: {
      id: newId('aud'),
      actorUserId: actor.userId,
      actorKeyId: actor.keyId ?? null,
      actorSession: actor.session ?? null,
      actorDeviceId: actor.deviceId ?? null,
      ip: actor.ip ?? null,
      action: change.action,
      resourceType: change.resourceType,
      resourceId: change.resourceId,
      ownerUserId: change.ownerUserId,
      teamId: change.teamId ?? null,
      before: snapshot(change.before),
      after: snapshot(change.after),
    },
  });
}

export interface AuditFilters {
  actorUserId?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  from?: Date;
  to?: Date;
}

/**
 * A page of the records a reader may read, newest first: those they made, those about their account's resources,
 * those about a team where they are an owner or an admin, and for an operator the operators' own. Nobody reads
 * another account's.
 */
export async function listAuditEvents(
  db: AccountDb,
  reader: { userId: string; operator: boolean },
  filters: AuditFilters,
  query: PageQuery,
): Promise<ListEnvelope<AuditRow>> {
  const seats = await db.teamMember.findMany({
    where: { userId: reader.userId, role: { in: TEAM_AUDIT_ROLES } },
    select: { teamId: true },
  });
  const range = keysetRange(query);
  const rows = await db.auditEvent.findMany({
    where: {
      OR: [
        { actorUserId: reader.userId },
        { ownerUserId: reader.userId },
        ...(seats.length > 0 ? [{ teamId: { in: seats.map((seat) => seat.teamId) } }] : []),
        ...(reader.operator ? [{ resourceType: { in: OPERATOR_RESOURCE_TYPES } }] : []),
      ],
      ...(filters.actorUserId !== undefined ? { actorUserId: filters.actorUserId } : {}),
      ...(filters.action !== undefined ? { action: filters.action } : {}),
      ...(filters.resourceType !== undefined ? { resourceType: filters.resourceType } : {}),
      ...(filters.resourceId !== undefined ? { resourceId: filters.resourceId } : {}),
      ...(filters.from || filters.to
        ? { at: { ...(filters.from ? { gte: filters.from } : {}), ...(filters.to ? { lt: filters.to } : {}) } }
        : {}),
      ...(range.cursor ? { id: range.cursor } : {}),
    },
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows, query, (row) => row.id);
}

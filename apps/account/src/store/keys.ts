import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import { Prisma, type CallerKey as CallerKeyRow, type PrismaClient as AccountDb } from '../generated/prisma/client';
import type { AuditDb } from './audit';

export type { CallerKeyRow };

export function findKeyByHash(db: AccountDb, keyHash: Buffer): Promise<CallerKeyRow | null> {
  return db.callerKey.findUnique({ where: { keyHash: new Uint8Array(keyHash) } });
}

/** A key of this user's account; another account's key is null, indistinguishable from a missing one. */
export function findOwnKey(db: AuditDb, userId: string, keyId: string): Promise<CallerKeyRow | null> {
  return db.callerKey.findFirst({ where: { id: keyId, userId } });
}

/** A key change as the audit log records it: the whole key before and after (the snapshot drops its hash). */
export function keyChange(action: string, before: CallerKeyRow | null, after: CallerKeyRow) {
  return {
    action,
    resourceType: 'key',
    resourceId: after.id,
    ownerUserId: after.userId,
    teamId: after.orgId,
    before: before && keyView(before),
    after: keyView(after),
  };
}

/** `last_used_at` moves with every call and is no change of the key's. */
const keyView = ({ lastUsedAt: _lastUsedAt, ...row }: CallerKeyRow) => row;

/** One page of the user's keys, revoked ones included, newest first (ids are ULIDs). */
export async function listKeys(db: AccountDb, userId: string, query: PageQuery): Promise<ListEnvelope<CallerKeyRow>> {
  const range = keysetRange(query);
  const rows = await db.callerKey.findMany({
    where: { userId, ...(range.cursor ? { id: range.cursor } : {}) },
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows, query, (row) => row.id);
}

/**
 * The stored form of a key's settings; `null` means the legacy scope set, every model, no cap, no device.
 */
export interface KeySettings {
  name: string;
  scopes: string[] | null;
  allowedModels: string[] | null;
  /** Globs over `<server>__<tool>`: the MCP tools the key may list and call; null = every tool. */
  allowedTools: string[] | null;
  dailyLimitCredits: number | null;
  monthlyLimitCredits: number | null;
  route: string;
  mode: string;
  incognito: boolean;
  deviceId: string | null;
  /** Requests and tokens per minute; null = the service's ceiling. */
  rpm: number | null;
  tpm: number | null;
  /** Response cache: seconds a reply is kept (0: off), and whether replies with tool calls are kept too. */
  cacheTtlS: number;
  cacheTools: boolean;
}

function jsonList(value: string[] | null): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return value === null ? Prisma.DbNull : value;
}

export function createKey(
  db: AuditDb,
  key: KeySettings & {
    id: string;
    userId: string;
    orgId: string | null;
    keyHash: Buffer;
    mask: string;
    /** The batch a runs-service key calls the lines of; set once, here, and never by an update. */
    batchId: string | null;
    /** With `batchId`: the key that created the batch, whose rate windows the batch's calls share. */
    parentKeyId: string | null;
  },
): Promise<CallerKeyRow> {
  return db.callerKey.create({
    data: {
      ...key,
      keyHash: new Uint8Array(key.keyHash),
      scopes: jsonList(key.scopes),
      allowedModels: jsonList(key.allowedModels),
      allowedTools: jsonList(key.allowedTools),
    },
  });
}

/** Writes a key's new settings unless it was revoked meanwhile; null when it was (or is gone). */
export async function updateKey(
  db: AuditDb,
  userId: string,
  keyId: string,
  settings: KeySettings,
): Promise<CallerKeyRow | null> {
  const { count } = await db.callerKey.updateMany({
    where: { id: keyId, userId, revokedAt: null },
    data: {
      ...settings,
      scopes: jsonList(settings.scopes),
      allowedModels: jsonList(settings.allowedModels),
      allowedTools: jsonList(settings.allowedTools),
    },
  });
  return count === 0 ? null : db.callerKey.findUnique({ where: { id: keyId } });
}

/**
 * Sets `revoked_at` once; revoking an already revoked key keeps the first time. Returns null when the key
 * is not on this user's account, so another account's key ids are indistinguishable from missing ones.
 */
export async function revokeKey(db: AuditDb, userId: string, keyId: string, now: Date): Promise<CallerKeyRow | null> {
  const key = await findOwnKey(db, userId, keyId);
  if (!key) return null;
  if (key.revokedAt) return key;
  await db.callerKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: now } });
  return db.callerKey.findUnique({ where: { id: keyId } });
}

/** Moves `last_used_at` forward only, so batches arriving out of order never move it back. */
export async function recordKeyUse(db: AccountDb, uses: { keyId: string; usedAt: Date }[]): Promise<void> {
  for (const use of uses) {
    await db.callerKey.updateMany({
      where: { id: use.keyId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: use.usedAt } }] },
      data: { lastUsedAt: use.usedAt },
    });
  }
}

/** Whether the user belongs to the team (any role): the condition for holding a key of that team. */
export async function isTeamMember(db: AccountDb, userId: string, teamId: string): Promise<boolean> {
  return (await db.teamMember.findUnique({ where: { teamId_userId: { teamId, userId } } })) !== null;
}

/** Whether the device is paired to this user's account. */
export async function isOwnDevice(db: AccountDb, userId: string, deviceId: string): Promise<boolean> {
  return (await db.device.findFirst({ where: { id: deviceId, userId }, select: { id: true } })) !== null;
}

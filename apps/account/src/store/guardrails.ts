import { ApiError } from '@sbc/errors';
import type { Guardrail as GuardrailRow, PrismaClient as AccountDb, Prisma } from '../generated/prisma/client';

export type { GuardrailRow };
type Db = AccountDb | Prisma.TransactionClient;

/** The most guardrails an account (or a team) keeps, and the most one key or team attaches. */
export const MAX_GUARDRAILS = 50;
const MAX_ATTACHED = 10;

function guardrailNotFound(): ApiError {
  return new ApiError('not_found', 'No such guardrail on this account.', { param: 'guardrail_id' });
}

/** Where a guardrail belongs: the account itself, or one of its teams. */
export type GuardrailOwner = { userId: string; teamId?: undefined } | { userId: string; teamId: string };

/** The owner's guardrails, newest first. */
export function listGuardrails(db: Db, owner: GuardrailOwner): Promise<GuardrailRow[]> {
  const where = owner.teamId === undefined ? { userId: owner.userId, orgId: null } : { orgId: owner.teamId };
  return db.guardrail.findMany({ where, orderBy: { id: 'desc' }, take: MAX_GUARDRAILS });
}

export function countGuardrails(db: Db, owner: GuardrailOwner): Promise<number> {
  const where = owner.teamId === undefined ? { userId: owner.userId, orgId: null } : { orgId: owner.teamId };
  return db.guardrail.count({ where });
}

/** A guardrail the caller may see: their account's, or a team's they are a member of; 404 otherwise. */
export async function findVisibleGuardrail(db: Db, userId: string, id: string): Promise<GuardrailRow> {
  const row = await db.guardrail.findUnique({ where: { id } });
  if (!row) throw guardrailNotFound();
  if (row.orgId === null ? row.userId !== userId : !(await isMember(db, row.orgId, userId))) throw guardrailNotFound();
  return row;
}

async function isMember(db: Db, teamId: string, userId: string): Promise<boolean> {
  return (await db.teamMember.findUnique({ where: { teamId_userId: { teamId, userId } } })) !== null;
}

/**
 * Checks that every id names a guardrail of `owner` (the key's account or team, or the team): an unknown id, or
 * another account's, is the caller's 400 on `guardrails`, so no id leaks whose it is.
 */
export async function checkAttachable(
  db: Db,
  ids: readonly string[],
  owners: readonly GuardrailOwner[],
): Promise<string[]> {
  const unique = [...new Set(ids)];
  if (unique.length > MAX_ATTACHED)
    throw ApiError.invalid([
      { path: 'guardrails', code: 'too_big', message: `At most ${MAX_ATTACHED} guardrails may be attached.` },
    ]);
  if (unique.length === 0) return unique;
  const rows = await db.guardrail.findMany({ where: { id: { in: unique } } });
  const allowed = (row: GuardrailRow) =>
    owners.some((owner) =>
      owner.teamId === undefined ? row.orgId === null && row.userId === owner.userId : row.orgId === owner.teamId,
    );
  const missing = unique.filter((id) => !rows.some((row) => row.id === id && allowed(row)));
  if (missing.length > 0)
    throw ApiError.invalid([
      { path: 'guardrails', code: 'invalid_value', message: `No such guardrail to attach: ${missing.join(', ')}.` },
    ]);
  return unique;
}

/** Whether any of `ids` is a guardrail of the team. */
export async function teamGuardrailsAmong(db: Db, ids: readonly string[], teamId: string): Promise<boolean> {
  return (await db.guardrail.count({ where: { id: { in: [...ids] }, orgId: teamId } })) > 0;
}

/** The hashes of every key whose calls may meet a guardrail of `owner`, to drop their cached principals. */
export async function keyHashesOf(db: Db, owner: GuardrailOwner): Promise<Uint8Array[]> {
  const where = owner.teamId === undefined ? { userId: owner.userId } : { orgId: owner.teamId };
  const keys = await db.callerKey.findMany({ where: { ...where, revokedAt: null }, select: { keyHash: true } });
  return keys.map((key) => key.keyHash);
}

/** Removes a guardrail from every key and team that names it. */
export async function detachEverywhere(tx: Prisma.TransactionClient, id: string): Promise<void> {
  await tx.$executeRaw`UPDATE caller_keys SET guardrail_ids = array_remove(guardrail_ids, ${id})
    WHERE ${id} = ANY(guardrail_ids)`;
  await tx.$executeRaw`UPDATE teams SET guardrail_ids = array_remove(guardrail_ids, ${id})
    WHERE ${id} = ANY(guardrail_ids)`;
}

/** The guardrails a key's calls may meet (its account's and its team's) and those attached to it and its team. */
export async function guardrailsOfKey(
  db: Db,
  key: { userId: string; orgId: string | null; guardrailIds: string[] },
): Promise<{ rows: GuardrailRow[]; attached: string[] }> {
  const team = key.orgId
    ? await db.team.findUnique({ where: { id: key.orgId }, select: { guardrailIds: true } })
    : null;
  const attached = [...new Set([...key.guardrailIds, ...(team?.guardrailIds ?? [])])];
  const rows = await db.guardrail.findMany({
    where: { OR: [{ userId: key.userId, orgId: null }, ...(key.orgId ? [{ orgId: key.orgId }] : [])] },
    orderBy: { id: 'asc' },
  });
  return { rows, attached: attached.filter((id) => rows.some((row) => row.id === id)) };
}

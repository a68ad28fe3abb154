import { ApiError } from '@sbc/errors';
import { newId } from '@sbc/ids';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import type { Scope } from '@sbc/scopes';
import type {
  Prisma,
  PrismaClient as AccountDb,
  Team as TeamRow,
  TeamMember as MemberRow,
} from '../generated/prisma/client';
import type { RecordChange } from './audit';
import { budgetOf, type StoredBudget } from './budget-column';
import { keyChange } from './keys';
import { stringsOf } from './json-columns';
import {
  isTeamRole,
  losesOwner,
  refuseGroupsChange,
  refuseRemoval,
  refuseRoleChange,
  refuseTeamDelete,
  refuseTeamUpdate,
  type Refusal,
  type Seat,
  type TeamRole,
} from '../teams/permissions';

/** The client a store function runs on: the database or an open transaction. */
export type TeamDb = AccountDb | Prisma.TransactionClient;

interface ShareDefaults {
  mcp: boolean;
  rules: boolean;
  skills: boolean;
}

export type SharePolicy = 'members' | 'editors';

/** A team as one caller sees it (`role` is theirs). */
export interface TeamView {
  id: string;
  name: string;
  role: TeamRole;
  memberCount: number;
  createdAt: Date;
  shareDefaults: ShareDefaults;
  sharePolicy: SharePolicy;
  requireManualConfirm: boolean;
  budget: StoredBudget | null;
  /** The guardrails every team key's calls pass through. */
  guardrailIds: string[];
}

export interface MemberView {
  userId: string;
  email: string;
  role: TeamRole;
  groups: string[];
  joinedAt: Date;
  budget: StoredBudget | null;
}

export interface TeamSettingsPatch {
  name?: string;
  shareDefaults?: Partial<ShareDefaults>;
  sharePolicy?: SharePolicy;
  requireManualConfirm?: boolean;
}

export interface MemberPatch {
  role?: TeamRole;
  groups?: string[];
}

/** Keys revoked by a membership change: the caller publishes their hashes so every edge drops them. */
export interface RevokedKeys {
  keyHashes: Buffer[];
}

/** The scopes a role refusal names, as the route's own scope refusal would. */
export const TEAM_READ_SCOPES: Scope[] = ['teams:read'];
export const TEAM_WRITE_SCOPES: Scope[] = ['teams:write'];
const DEFAULT_SHARE: ShareDefaults = { mcp: true, rules: true, skills: true };

/** A member whose role does not allow the action: 403 with the route's scopes, as a missing scope would be. */
export function refuse(refusal: Refusal, scopes: Scope[] = TEAM_WRITE_SCOPES): void {
  if (refusal !== null) throw new ApiError('insufficient_scope', refusal, { extra: { required_scopes: scopes } });
}

export function teamNotFound(): ApiError {
  return new ApiError('not_found', 'No such team, or you are not a member of it.', { param: 'team_id' });
}

export function roleOf(value: string): TeamRole {
  // The table's CHECK constraint allows only the four roles.
  return isTeamRole(value) ? value : 'member';
}

export function shareDefaultsOf(value: Prisma.JsonValue): ShareDefaults {
  const stored = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const flag = (name: keyof ShareDefaults) =>
    typeof stored[name] === 'boolean' ? (stored[name] as boolean) : DEFAULT_SHARE[name];
  return { mcp: flag('mcp'), rules: flag('rules'), skills: flag('skills') };
}

type TeamWithSeat = TeamRow & { _count: { members: number }; members: { role: string }[] };

function teamView(row: TeamWithSeat): TeamView {
  return {
    id: row.id,
    name: row.name,
    role: roleOf(row.members[0]?.role ?? 'member'),
    memberCount: row._count.members,
    createdAt: row.createdAt,
    shareDefaults: shareDefaultsOf(row.shareDefaults),
    sharePolicy: row.sharePolicy === 'editors' ? 'editors' : 'members',
    requireManualConfirm: row.requireManualConfirm,
    budget: budgetOf(row.budget),
    guardrailIds: row.guardrailIds,
  };
}

const seatOfCaller = (userId: string) =>
  ({ _count: { select: { members: true } }, members: { where: { userId }, select: { role: true } } }) as const;

/** The team as `userId` sees it; 404 when there is no such team or they are not in it. */
export async function getTeam(db: TeamDb, userId: string, teamId: string): Promise<TeamView> {
  const row = await db.team.findFirst({
    where: { id: teamId, members: { some: { userId } } },
    include: seatOfCaller(userId),
  });
  if (!row) throw teamNotFound();
  return teamView(row);
}

/** The caller's seat on a team; 404 for a non-member, so a team's existence never leaks. */
export async function seatOf(db: TeamDb, teamId: string, userId: string): Promise<Seat> {
  const row = await db.teamMember.findUnique({ where: { teamId_userId: { teamId, userId } }, select: { role: true } });
  if (!row) throw teamNotFound();
  return { userId, role: roleOf(row.role) };
}

/**
 * Locks the team's row for the rest of the transaction, so membership changes of one team run one at a
 * time and "a team keeps an owner" holds under concurrent demotions, removals and leaves.
 */
export async function lockTeam(tx: Prisma.TransactionClient, teamId: string): Promise<void> {
  const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM teams WHERE id = ${teamId} FOR UPDATE`;
  if (rows.length === 0) throw teamNotFound();
}

/**
 * Where-clause for a keyset page over (time, key) in `order`: rows strictly past the cursor row. Lists whose
 * ids are not time-sortable (members by user id, invites by code) page this way, newest first.
 */
export function pastCursor(
  order: 'asc' | 'desc',
  timeField: string,
  keyField: string,
  at: Date,
  key: string,
): Record<string, unknown> {
  const cmp = order === 'desc' ? 'lt' : 'gt';
  return { OR: [{ [timeField]: { [cmp]: at } }, { [timeField]: at, [keyField]: { [cmp]: key } }] };
}

export function unknownCursor(page: PageQuery, what: string): ApiError {
  const param = page.after_id !== undefined ? 'after_id' : 'before_id';
  return new ApiError('invalid_request', `${param} is not ${what} of this team.`, { param });
}

export async function listTeams(db: TeamDb, userId: string, page: PageQuery): Promise<ListEnvelope<TeamView>> {
  const range = keysetRange(page);
  const rows = await db.team.findMany({
    where: { members: { some: { userId } }, ...(range.cursor ? { id: range.cursor } : {}) },
    include: seatOfCaller(userId),
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows.map(teamView), page, (team) => team.id);
}

export async function createTeam(
  db: AccountDb,
  userId: string,
  input: { name: string } & TeamSettingsPatch,
  now: Date,
  record: RecordChange,
): Promise<TeamView> {
  const id = newId('org', now.getTime());
  const shareDefaults = { ...DEFAULT_SHARE, ...input.shareDefaults };
  return db.$transaction(async (tx) => {
    const team = await tx.team.create({
      data: {
        id,
        name: input.name,
        shareDefaults,
        sharePolicy: input.sharePolicy ?? 'members',
        requireManualConfirm: input.requireManualConfirm ?? false,
        createdBy: userId,
        createdAt: now,
        // The creator is its first member: share_defaults say what they pool, as for anyone who joins.
        members: { create: { userId, role: 'owner', joinedAt: now, shareMcp: shareDefaults.mcp } },
      },
    });
    await record(tx, teamChange('team.create', null, team));
    return getTeam(tx, userId, id);
  });
}

/** A change of a team's own settings as the audit log records it: the whole row, read by the team's admins. */
export function teamChange(action: string, before: TeamRow | null, after: TeamRow | null) {
  const id = (after ?? before)!.id;
  return { action, resourceType: 'team', resourceId: id, ownerUserId: null, teamId: id, before, after };
}

/** A change of a membership: read by the team's admins and by the member. */
export function memberChange(action: string, before: MemberRow | null, after: MemberRow | null) {
  const row = (after ?? before)!;
  return {
    action,
    resourceType: 'team_member',
    resourceId: row.userId,
    ownerUserId: row.userId,
    teamId: row.teamId,
    before,
    after,
  };
}

export async function updateTeam(
  db: AccountDb,
  userId: string,
  teamId: string,
  patch: TeamSettingsPatch,
  record: RecordChange,
): Promise<TeamView> {
  return db.$transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const actor = await seatOf(tx, teamId, userId);
    refuse(refuseTeamUpdate(actor.role));
    const current = await tx.team.findUniqueOrThrow({ where: { id: teamId } });
    const after = await tx.team.update({
      where: { id: teamId },
      data: {
        name: patch.name,
        shareDefaults: patch.shareDefaults
          ? { ...shareDefaultsOf(current.shareDefaults), ...patch.shareDefaults }
          : undefined,
        sharePolicy: patch.sharePolicy,
        requireManualConfirm: patch.requireManualConfirm,
      },
    });
    await record(tx, teamChange('team.update', current, after));
    return getTeam(tx, userId, teamId);
  });
}

/**
 * Revokes the live team keys of `userId` on the team (every member's when absent), each recorded in the audit log,
 * and returns their hashes.
 */
async function revokeTeamKeys(
  tx: Prisma.TransactionClient,
  teamId: string,
  userId: string | undefined,
  now: Date,
  record: RecordChange,
): Promise<RevokedKeys> {
  const where = { orgId: teamId, revokedAt: null, ...(userId ? { userId } : {}) };
  const keys = await tx.callerKey.findMany({ where });
  if (keys.length > 0) await tx.callerKey.updateMany({ where, data: { revokedAt: now } });
  for (const key of keys) await record(tx, keyChange('key.revoke', key, { ...key, revokedAt: now }));
  return { keyHashes: keys.map((key) => Buffer.from(key.keyHash)) };
}

/** Deletes the team with its members and invites (the tables cascade) and revokes every key on it. */
export async function deleteTeam(
  db: AccountDb,
  userId: string,
  teamId: string,
  now: Date,
  record: RecordChange,
): Promise<RevokedKeys> {
  return db.$transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const actor = await seatOf(tx, teamId, userId);
    refuse(refuseTeamDelete(actor.role));
    const revoked = await revokeTeamKeys(tx, teamId, undefined, now, record);
    const before = await tx.team.delete({ where: { id: teamId } });
    await record(tx, teamChange('team.delete', before, null));
    return revoked;
  });
}

async function memberViews(db: TeamDb, rows: MemberRow[]): Promise<MemberView[]> {
  const users = await db.user.findMany({
    where: { id: { in: rows.map((row) => row.userId) } },
    select: { id: true, email: true },
  });
  const emails = new Map(users.map((user) => [user.id, user.email]));
  return rows.map((row) => ({
    userId: row.userId,
    email: emails.get(row.userId) ?? '',
    role: roleOf(row.role),
    groups: stringsOf(row.groups),
    joinedAt: row.joinedAt,
    budget: budgetOf(row.budget),
  }));
}

/** Members, most recently joined first; the cursors are member user ids. */
export async function listMembers(
  db: TeamDb,
  userId: string,
  teamId: string,
  page: PageQuery,
): Promise<ListEnvelope<MemberView>> {
  await seatOf(db, teamId, userId);
  const range = keysetRange(page);
  const cursorId = page.after_id ?? page.before_id;
  let past = {};
  if (cursorId !== undefined) {
    const cursor = await db.teamMember.findUnique({ where: { teamId_userId: { teamId, userId: cursorId } } });
    if (!cursor) throw unknownCursor(page, 'a member');
    past = pastCursor(range.order, 'joinedAt', 'userId', cursor.joinedAt, cursor.userId);
  }
  const rows = await db.teamMember.findMany({
    where: { teamId, ...past },
    orderBy: [{ joinedAt: range.order }, { userId: range.order }],
    take: range.take,
  });
  return toPage(await memberViews(db, rows), page, (member) => member.userId);
}

async function targetSeat(tx: TeamDb, teamId: string, userId: string): Promise<Seat> {
  const row = await tx.teamMember.findUnique({ where: { teamId_userId: { teamId, userId } }, select: { role: true } });
  if (!row) throw new ApiError('not_found', 'No such member of this team.', { param: 'user_id' });
  return { userId, role: roleOf(row.role) };
}

/** A team always keeps an owner; call under lockTeam. */
async function requireAnotherOwner(
  tx: Prisma.TransactionClient,
  teamId: string,
  target: Seat,
  action: string,
): Promise<void> {
  const others = await tx.teamMember.count({ where: { teamId, role: 'owner', userId: { not: target.userId } } });
  if (others === 0)
    throw new ApiError('conflict', `The last owner cannot ${action}; make another member an owner first.`, {
      param: 'user_id',
    });
}

export async function updateMember(
  db: AccountDb,
  userId: string,
  teamId: string,
  memberId: string,
  patch: MemberPatch,
  record: RecordChange,
): Promise<MemberView> {
  return db.$transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const actor = await seatOf(tx, teamId, userId);
    const target = await targetSeat(tx, teamId, memberId);
    if (patch.role !== undefined) refuse(refuseRoleChange(actor, target, patch.role));
    if (patch.groups !== undefined) refuse(refuseGroupsChange(actor, target));
    if (patch.role !== undefined && losesOwner(target, patch.role))
      await requireAnotherOwner(tx, teamId, target, 'be demoted');
    const before = await tx.teamMember.findUniqueOrThrow({ where: { teamId_userId: { teamId, userId: memberId } } });
    const row = await tx.teamMember.update({
      where: { teamId_userId: { teamId, userId: memberId } },
      data: { role: patch.role, groups: patch.groups },
    });
    await record(tx, memberChange('team_member.update', before, row));
    const [view] = await memberViews(tx, [row]);
    return view!;
  });
}

/** Removes a member (or the caller leaves) and revokes that member's keys on the team. */
export async function removeMember(
  db: AccountDb,
  userId: string,
  teamId: string,
  memberId: string,
  now: Date,
  record: RecordChange,
): Promise<RevokedKeys> {
  return db.$transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const actor = await seatOf(tx, teamId, userId);
    const target = await targetSeat(tx, teamId, memberId);
    refuse(refuseRemoval(actor, target));
    if (losesOwner(target, 'removed')) await requireAnotherOwner(tx, teamId, target, 'leave or be removed');
    const before = await tx.teamMember.delete({ where: { teamId_userId: { teamId, userId: memberId } } });
    await record(tx, memberChange('team_member.remove', before, null));
    return revokeTeamKeys(tx, teamId, memberId, now, record);
  });
}

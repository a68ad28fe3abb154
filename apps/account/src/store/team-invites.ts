import { randomBytes } from 'node:crypto';
import { ApiError } from '@sbc/errors';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import type { Prisma, PrismaClient as AccountDb, TeamInvite as InviteRow } from '../generated/prisma/client';
import type { RecordChange } from './audit';
import { refuseInvite, refuseInviteManagement, type TeamRole } from '../teams/permissions';
import {
  getTeam,
  lockTeam,
  pastCursor,
  refuse,
  roleOf,
  seatOf,
  shareDefaultsOf,
  TEAM_READ_SCOPES,
  TEAM_WRITE_SCOPES,
  unknownCursor,
  memberChange,
  type TeamDb,
  type TeamView,
} from './teams';

/** How long an invite (or a resent one, from the resend) can be accepted. */
const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface InviteView {
  code: string;
  teamId: string;
  email: string;
  role: TeamRole;
  createdAt: Date;
  expiresAt: Date;
  sentCount: number;
  lastSentAt: Date;
}

/** 18 random bytes → 24 url-safe characters (144 bits): the code is the credential the invitee presents. */
function newInviteCode(): string {
  return randomBytes(18).toString('base64url');
}

function inviteView(row: InviteRow): InviteView {
  return {
    code: row.code,
    teamId: row.teamId,
    email: row.email,
    role: roleOf(row.role),
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    sentCount: row.sentCount,
    lastSentAt: row.lastSentAt,
  };
}

/** An invite's change as the audit log records it: read by the team's admins. */
function inviteChange(action: string, before: InviteRow | null, after: InviteRow) {
  return {
    action,
    resourceType: 'team_invite',
    resourceId: after.code,
    ownerUserId: null,
    teamId: after.teamId,
    before,
    after,
  };
}

const inviteNotFound = () =>
  new ApiError('not_found', 'No pending invite with this code on this team.', { param: 'code' });

/** Neither accepted nor revoked; an expired invite is still pending (a resend revives it). */
const PENDING = { acceptedAt: null, revokedAt: null } as const;

/** Pending invites, newest first; the cursors are invite codes. Only owners and admins see them. */
export async function listInvites(
  db: TeamDb,
  userId: string,
  teamId: string,
  page: PageQuery,
): Promise<ListEnvelope<InviteView>> {
  const actor = await seatOf(db, teamId, userId);
  refuse(refuseInviteManagement(actor.role), TEAM_READ_SCOPES);
  const range = keysetRange(page);
  const cursorCode = page.after_id ?? page.before_id;
  let past = {};
  if (cursorCode !== undefined) {
    const cursor = await db.teamInvite.findFirst({ where: { code: cursorCode, teamId, ...PENDING } });
    if (!cursor) throw unknownCursor(page, 'a pending invite');
    past = pastCursor(range.order, 'createdAt', 'code', cursor.createdAt, cursor.code);
  }
  const rows = await db.teamInvite.findMany({
    where: { teamId, ...PENDING, ...past },
    orderBy: [{ createdAt: range.order }, { code: range.order }],
    take: range.take,
  });
  return toPage(rows.map(inviteView), page, (invite) => invite.code);
}

/**
 * One pending invite per address and team: a second one while the first can still be accepted is 409; an
 * expired one is superseded (revoked) by the new invite. Inviting someone already in the team is 409.
 */
export async function createInvite(
  db: AccountDb,
  userId: string,
  teamId: string,
  input: { email: string; role: TeamRole },
  now: Date,
  record: RecordChange,
): Promise<InviteView> {
  const email = input.email.trim().toLowerCase();
  return db.$transaction(async (tx) => {
    await lockTeam(tx, teamId);
    const actor = await seatOf(tx, teamId, userId);
    refuse(refuseInvite(actor.role, input.role));
    const invitee = await tx.user.findUnique({ where: { email }, select: { id: true } });
    if (invitee && (await tx.teamMember.findUnique({ where: { teamId_userId: { teamId, userId: invitee.id } } }))) {
      throw new ApiError('conflict', `${email} is already a member of this team.`, { param: 'email' });
    }
    const pending = await tx.teamInvite.findFirst({ where: { teamId, email, ...PENDING } });
    if (pending && pending.expiresAt > now) {
      throw new ApiError('conflict', `An invite for ${email} is already pending; resend or revoke it.`, {
        param: 'email',
      });
    }
    if (pending) await tx.teamInvite.update({ where: { code: pending.code }, data: { revokedAt: now } });
    const row = await tx.teamInvite.create({
      data: {
        code: newInviteCode(),
        teamId,
        email,
        role: input.role,
        invitedBy: userId,
        createdAt: now,
        expiresAt: new Date(now.getTime() + INVITE_TTL_MS),
        sentCount: 1,
        lastSentAt: now,
      },
    });
    await record(tx, inviteChange('team_invite.create', null, row));
    return inviteView(row);
  });
}

/**
 * Changes a pending invite of the team by `data`, for a caller who may manage invites, and records the change.
 * Conditional, so a change racing an accept or a revoke applies once; a missing or settled invite is 404.
 */
async function changePendingInvite(
  db: AccountDb,
  change: {
    userId: string;
    teamId: string;
    code: string;
    action: string;
    data: Prisma.TeamInviteUpdateManyMutationInput;
  },
  record: RecordChange,
): Promise<InviteRow> {
  const { userId, teamId, code, action, data } = change;
  return db.$transaction(async (tx) => {
    const actor = await seatOf(tx, teamId, userId);
    refuse(refuseInviteManagement(actor.role));
    const before = await tx.teamInvite.findFirst({ where: { code, teamId, ...PENDING } });
    const { count } = await tx.teamInvite.updateMany({ where: { code, teamId, ...PENDING }, data });
    if (!before || count === 0) throw inviteNotFound();
    const after = await tx.teamInvite.findUniqueOrThrow({ where: { code } });
    await record(tx, inviteChange(action, before, after));
    return after;
  });
}

export async function revokeInvite(
  db: AccountDb,
  userId: string,
  teamId: string,
  code: string,
  now: Date,
  record: RecordChange,
): Promise<void> {
  await changePendingInvite(
    db,
    { userId, teamId, code, action: 'team_invite.revoke', data: { revokedAt: now } },
    record,
  );
}

/** Records another sending and restarts the expiry; the mail itself is not sent from here. */
export async function resendInvite(
  db: AccountDb,
  userId: string,
  teamId: string,
  code: string,
  now: Date,
  record: RecordChange,
): Promise<InviteView> {
  const data = { sentCount: { increment: 1 }, lastSentAt: now, expiresAt: new Date(now.getTime() + INVITE_TTL_MS) };
  return inviteView(
    await changePendingInvite(db, { userId, teamId, code, action: 'team_invite.resend', data }, record),
  );
}

/**
 * The user the invite was sent to (same e-mail, case aside) joins with its role, once: the code alone is
 * not enough, so a code that reaches someone else is 403 for them and stays pending for the invitee. Any other
 * code (unknown, expired, revoked or already used) is 404; a caller already in the team is 409 and the invite
 * stays pending.
 */
export async function acceptInvite(
  db: AccountDb,
  userId: string,
  code: string,
  now: Date,
  record: RecordChange,
): Promise<TeamView> {
  const notAcceptable = () =>
    new ApiError(
      'not_found',
      'No invite with this code can be accepted: it does not exist, has expired, was revoked or was already used.',
      { param: 'code' },
    );
  return db.$transaction(async (tx) => {
    const invite = await tx.teamInvite.findUnique({ where: { code } });
    if (!invite || invite.acceptedAt || invite.revokedAt || invite.expiresAt <= now) throw notAcceptable();
    const caller = await tx.user.findUnique({ where: { id: userId }, select: { email: true } });
    if (!caller || caller.email.toLowerCase() !== invite.email.toLowerCase()) {
      // The invited address is not named: the code may have reached someone it was not meant for.
      throw new ApiError(
        'insufficient_scope',
        'This invite was sent to another e-mail address; only that user can accept it.',
        { param: 'code', extra: { required_scopes: TEAM_WRITE_SCOPES } },
      );
    }
    await lockTeam(tx, invite.teamId);
    if (await tx.teamMember.findUnique({ where: { teamId_userId: { teamId: invite.teamId, userId } } })) {
      throw new ApiError('conflict', 'You are already a member of this team.', { param: 'code' });
    }
    // Conditional, so two callers racing with one code cannot both join.
    const { count } = await tx.teamInvite.updateMany({
      where: { code, ...PENDING, expiresAt: { gt: now } },
      data: { acceptedAt: now, acceptedBy: userId },
    });
    if (count === 0) throw notAcceptable();
    // share_defaults.mcp as it stands now says whether the new member's tool servers join the team's pool.
    const team = await tx.team.findUniqueOrThrow({ where: { id: invite.teamId }, select: { shareDefaults: true } });
    const member = await tx.teamMember.create({
      data: {
        teamId: invite.teamId,
        userId,
        role: invite.role,
        joinedAt: now,
        shareMcp: shareDefaultsOf(team.shareDefaults).mcp,
      },
    });
    await record(tx, memberChange('team_member.join', null, member));
    return getTeam(tx, userId, invite.teamId);
  });
}

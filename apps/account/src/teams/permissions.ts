/**
 * What each team role may do, with no I/O: the store asks these before it writes, and turns a refusal into
 * 403 `insufficient_scope`. The one rule that needs the database (a team always keeps an owner) lives in the
 * store, under the team's row lock.
 *
 * - owner: everything, including deleting the team and making or demoting owners.
 * - admin: edits the team's settings, manages invites, and manages editors and members (changes their role
 *   up to admin, edits their groups, removes them). Admins are peers: only an owner acts on another admin.
 * - editor, member: read the team and its members. (Editors differ from members in what they may add to
 *   the team's pool, which `share_policy` governs, not in managing the team.)
 * - anyone may step down to a lower role or leave.
 */

export const TEAM_ROLES = ['owner', 'admin', 'editor', 'member'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** Owners are made by promotion, never by invite. */
export const INVITABLE_ROLES = ['admin', 'editor', 'member'] as const satisfies readonly TeamRole[];

const RANK: Record<TeamRole, number> = { owner: 3, admin: 2, editor: 1, member: 0 };

export function isTeamRole(value: string): value is TeamRole {
  return (TEAM_ROLES as readonly string[]).includes(value);
}

export interface Seat {
  userId: string;
  role: TeamRole;
}

/** A reason the action is refused, or null when the role allows it. */
export type Refusal = string | null;

const MANAGERS_ONLY = 'Only team owners and admins may do this.';

export function refuseTeamUpdate(actor: TeamRole): Refusal {
  return RANK[actor] >= RANK.admin ? null : 'Only team owners and admins may change team settings.';
}

export function refuseTeamDelete(actor: TeamRole): Refusal {
  return actor === 'owner' ? null : 'Only a team owner may delete the team.';
}

/** Listing, creating, revoking and resending invites: invite codes are credentials, so only managers see them. */
export function refuseInviteManagement(actor: TeamRole): Refusal {
  return RANK[actor] >= RANK.admin ? null : MANAGERS_ONLY;
}

export function refuseInvite(actor: TeamRole, role: TeamRole): Refusal {
  if (RANK[actor] < RANK.admin) return MANAGERS_ONLY;
  if (role === 'owner') return 'An invite cannot make an owner; invite as admin and promote the member once they join.';
  return null;
}

/** Owners act on anyone; admins on editors, members and themselves. */
function manages(actor: Seat, target: Seat): boolean {
  if (actor.role === 'owner') return true;
  return actor.role === 'admin' && (actor.userId === target.userId || RANK[target.role] < RANK.admin);
}

export function refuseRoleChange(actor: Seat, target: Seat, next: TeamRole): Refusal {
  // Stepping down (or staying put) needs no one's permission.
  if (actor.userId === target.userId && RANK[next] <= RANK[target.role]) return null;
  if (RANK[actor.role] < RANK.admin) return 'Only team owners and admins may change roles.';
  if (!manages(actor, target))
    return `Only an owner may change the role of ${target.role === 'owner' ? 'an owner' : 'an admin'}.`;
  if (next === 'owner' && actor.role !== 'owner') return 'Only an owner may make another owner.';
  return null;
}

export function refuseGroupsChange(actor: Seat, target: Seat): Refusal {
  if (manages(actor, target)) return null;
  return RANK[actor.role] < RANK.admin
    ? 'Only team owners and admins may change groups.'
    : `Only an owner may change the groups of ${target.role === 'owner' ? 'an owner' : 'an admin'}.`;
}

export function refuseRemoval(actor: Seat, target: Seat): Refusal {
  if (actor.userId === target.userId) return null;
  if (manages(actor, target)) return null;
  return RANK[actor.role] < RANK.admin
    ? 'Only team owners and admins may remove members; anyone may leave.'
    : `Only an owner may remove ${target.role === 'owner' ? 'an owner' : 'an admin'}.`;
}

/** True when the change takes an owner seat away (the store then checks another owner remains). */
export function losesOwner(target: Seat, next: TeamRole | 'removed'): boolean {
  return target.role === 'owner' && next !== 'owner';
}

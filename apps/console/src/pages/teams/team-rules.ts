import type { Team, TeamMember, TeamRole } from '../../api/types';

// The account service's rules for who may change whom (SERVICE.md, team routes), mirrored so the page offers
// only what the API will allow; the API still decides.
const RANK: Record<TeamRole, number> = { member: 0, editor: 1, admin: 2, owner: 3 };
const ROLES: TeamRole[] = ['owner', 'admin', 'editor', 'member'];

export const canManage = (role: TeamRole) => role === 'owner' || role === 'admin';

/** The last owner can neither leave, be removed, nor be demoted: someone must be able to run the team. */
export function isLastOwner(member: TeamMember, members: TeamMember[]): boolean {
  return member.role === 'owner' && members.filter((one) => one.role === 'owner').length === 1;
}

/** The roles `caller` may give `member` (the member's own role included), or none when it may not change it. */
export function assignableRoles(
  caller: { userId: string; role: TeamRole },
  member: TeamMember,
  members: TeamMember[],
): TeamRole[] {
  if (isLastOwner(member, members)) return [];
  if (caller.role === 'owner') return ROLES;
  if (member.user_id === caller.userId) return ROLES.filter((role) => RANK[role] <= RANK[caller.role]);
  if (caller.role === 'admin' && RANK[member.role] < RANK.admin) return ['admin', 'editor', 'member'];
  return [];
}

/** Whether `caller` may remove `member` (removing oneself is leaving). */
export function canRemove(caller: { userId: string; role: TeamRole }, member: TeamMember, members: TeamMember[]) {
  if (isLastOwner(member, members)) return false;
  if (member.user_id === caller.userId || caller.role === 'owner') return true;
  return caller.role === 'admin' && RANK[member.role] < RANK.admin;
}

/**
 * The roles whose MCP tool servers may join the team's pool under its `share_policy` (`members`: anyone's;
 * `editors`: editors', admins' and owners'), as the account service builds the pool team keys see.
 */
export const poolRoles = (policy: Team['share_policy']): TeamRole[] =>
  policy === 'editors' ? ROLES.filter((role) => RANK[role] >= RANK.editor) : ROLES;

/** The link an invitee opens to accept: the console's accept page on this very origin. */
export const acceptLink = (origin: string, code: string) => `${origin}/console/invite?code=${encodeURIComponent(code)}`;

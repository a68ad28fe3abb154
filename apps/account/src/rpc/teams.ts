import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import { KEY_REVOKED_CHANNEL, MCP_SERVERS_CHANGED_CHANNEL } from '@sbc/events';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type PageQuery } from '@sbc/pagination';
import type {
  BudgetValue,
  TeamInviteSchema,
  TeamMemberSchema,
  TeamPage,
  TeamSchema,
  TeamService,
  TeamSharePatch,
} from '@sbc/proto/sbc/account/v1/teams_pb';
import type { RpcImplementation } from '@sbc/rpc';
import {
  acceptInvite,
  createInvite,
  listInvites,
  resendInvite,
  revokeInvite,
  type InviteView,
} from '../store/team-invites';
import type { StoredBudget } from '../store/budget-column';
import { setMemberBudget, setTeamBudget, storedBudget } from '../store/team-budgets';
import { toProtoBudget } from './budgets';
import {
  createTeam,
  deleteTeam,
  getTeam,
  listMembers,
  listTeams,
  removeMember,
  updateMember,
  updateTeam,
  type MemberView,
  type RevokedKeys,
  type SharePolicy,
  type TeamSettingsPatch,
  type TeamView,
} from '../store/teams';
import { INVITABLE_ROLES, isTeamRole, TEAM_ROLES, type TeamRole } from '../teams/permissions';
import type { AccountServiceDeps } from './account-service';
import { recordAs } from './audit';

/** A budget change as stored: null removes the budget. */
function budgetChange(change: BudgetValue, now: Date): StoredBudget | null {
  const value = change.value;
  if (!value) return null;
  return storedBudget({ credits: Number(value.credits), period: value.period, timeZone: value.timeZone }, now);
}

function toProtoTeam(team: TeamView): MessageInitShape<typeof TeamSchema> {
  return {
    id: team.id,
    name: team.name,
    role: team.role,
    memberCount: team.memberCount,
    createdAt: timestampFromDate(team.createdAt),
    shareDefaults: team.shareDefaults,
    sharePolicy: team.sharePolicy,
    requireManualConfirm: team.requireManualConfirm,
    budget: toProtoBudget(team.budget),
    guardrailIds: team.guardrailIds,
  };
}

function toProtoMember(member: MemberView): MessageInitShape<typeof TeamMemberSchema> {
  return { ...member, joinedAt: timestampFromDate(member.joinedAt), budget: toProtoBudget(member.budget) };
}

function toProtoInvite(invite: InviteView): MessageInitShape<typeof TeamInviteSchema> {
  return {
    ...invite,
    createdAt: timestampFromDate(invite.createdAt),
    expiresAt: timestampFromDate(invite.expiresAt),
    lastSentAt: timestampFromDate(invite.lastSentAt),
  };
}

// The edge validates every field against the route's schema; these checks keep the service whole for any
// other caller of the RPC.
function required(value: string, param: string): string {
  if (!value) throw new ApiError('invalid_request', `${param} is required`, { param });
  return value;
}

function pageOf(page: TeamPage | undefined): PageQuery {
  const limit = Math.min(Math.max(page?.limit || DEFAULT_PAGE_LIMIT, 1), MAX_PAGE_LIMIT);
  if (page?.afterId !== undefined && page.beforeId !== undefined)
    throw new ApiError('invalid_request', 'Pass after_id or before_id, not both.', { param: 'before_id' });
  return { limit, after_id: page?.afterId, before_id: page?.beforeId };
}

function roleParam(value: string, allowed: readonly TeamRole[], param = 'role'): TeamRole {
  if (!isTeamRole(value) || !allowed.includes(value))
    throw new ApiError('invalid_request', `${param} must be one of ${allowed.join(', ')}`, { param });
  return value;
}

function settingsOf(request: {
  name?: string;
  shareDefaults?: TeamSharePatch;
  sharePolicy?: string;
  requireManualConfirm?: boolean;
}): TeamSettingsPatch {
  const { name, shareDefaults, sharePolicy, requireManualConfirm } = request;
  if (name !== undefined && (name.trim().length < 1 || name.length > 100))
    throw new ApiError('invalid_request', 'name must be 1 to 100 characters', { param: 'name' });
  if (sharePolicy !== undefined && sharePolicy !== 'members' && sharePolicy !== 'editors')
    throw new ApiError('invalid_request', 'share_policy must be members or editors', { param: 'share_policy' });
  const share = shareDefaults
    ? Object.fromEntries(
        Object.entries({ mcp: shareDefaults.mcp, rules: shareDefaults.rules, skills: shareDefaults.skills }).filter(
          ([, on]) => on !== undefined,
        ),
      )
    : undefined;
  return { name, shareDefaults: share, sharePolicy: sharePolicy as SharePolicy | undefined, requireManualConfirm };
}

/**
 * TeamService: teams, members and invites on behalf of the calling user. Role rules are in
 * ../teams/permissions.ts; the store applies them under the team's row lock.
 */
export function createTeamService(deps: AccountServiceDeps): RpcImplementation<typeof TeamService> {
  const now = deps.now ?? (() => new Date());
  // Keys revoked with a membership: every edge drops them from its credential cache at once.
  const publishRevoked = async ({ keyHashes }: RevokedKeys) => {
    for (const hash of keyHashes) await deps.pubsub.publish(KEY_REVOKED_CHANNEL, hash.toString('hex'));
  };
  // Who is in a team, their role and its share policy decide its MCP pool: every edge drops the team's tables.
  const poolChanged = (teamId: string) => deps.pubsub.publish(MCP_SERVERS_CHANGED_CHANNEL, teamId);

  return {
    async listTeams(request) {
      const page = await listTeams(deps.db, required(request.userId, 'user_id'), pageOf(request.page));
      return { teams: page.data.map(toProtoTeam), hasMore: page.has_more };
    },

    async createTeam(request, ctx) {
      const settings = settingsOf(request);
      const team = await createTeam(
        deps.db,
        required(request.userId, 'user_id'),
        { ...settings, name: required(settings.name?.trim() ?? '', 'name') },
        now(),
        recordAs(ctx, request.userId),
      );
      return { team: toProtoTeam(team) };
    },

    async getTeam(request) {
      return {
        team: toProtoTeam(
          await getTeam(deps.db, required(request.userId, 'user_id'), required(request.teamId, 'team_id')),
        ),
      };
    },

    async updateTeam(request, ctx) {
      const settings = settingsOf({ ...request, name: request.name?.trim() });
      const userId = required(request.userId, 'user_id');
      const teamId = required(request.teamId, 'team_id');
      if (request.budget)
        await publishRevoked(
          await setTeamBudget(deps.db, userId, teamId, budgetChange(request.budget, now()), recordAs(ctx, userId)),
        );
      const team = await updateTeam(deps.db, userId, teamId, settings, recordAs(ctx, request.userId));
      await poolChanged(teamId);
      return { team: toProtoTeam(team) };
    },

    async deleteTeam(request, ctx) {
      await publishRevoked(
        await deleteTeam(
          deps.db,
          required(request.userId, 'user_id'),
          required(request.teamId, 'team_id'),
          now(),
          recordAs(ctx, request.userId),
        ),
      );
      await poolChanged(request.teamId);
      return {};
    },

    async listTeamMembers(request) {
      const page = await listMembers(
        deps.db,
        required(request.userId, 'user_id'),
        required(request.teamId, 'team_id'),
        pageOf(request.page),
      );
      return { members: page.data.map(toProtoMember), hasMore: page.has_more };
    },

    async updateTeamMember(request, ctx) {
      const patch = {
        role: request.role === undefined ? undefined : roleParam(request.role, TEAM_ROLES),
        groups: request.groups?.values,
      };
      if (request.budget) {
        const budget = budgetChange(request.budget, now());
        await publishRevoked(
          await setMemberBudget(
            deps.db,
            required(request.userId, 'user_id'),
            required(request.teamId, 'team_id'),
            required(request.memberUserId, 'member_user_id'),
            budget,
            recordAs(ctx, request.userId),
          ),
        );
      }
      const member = await updateMember(
        deps.db,
        required(request.userId, 'user_id'),
        required(request.teamId, 'team_id'),
        required(request.memberUserId, 'member_user_id'),
        patch,
        recordAs(ctx, request.userId),
      );
      await poolChanged(request.teamId);
      return { member: toProtoMember(member) };
    },

    async removeTeamMember(request, ctx) {
      await publishRevoked(
        await removeMember(
          deps.db,
          required(request.userId, 'user_id'),
          required(request.teamId, 'team_id'),
          required(request.memberUserId, 'member_user_id'),
          now(),
          recordAs(ctx, request.userId),
        ),
      );
      await poolChanged(request.teamId);
      return {};
    },

    async listTeamInvites(request) {
      const page = await listInvites(
        deps.db,
        required(request.userId, 'user_id'),
        required(request.teamId, 'team_id'),
        pageOf(request.page),
      );
      return { invites: page.data.map(toProtoInvite), hasMore: page.has_more };
    },

    async createTeamInvite(request, ctx) {
      const invite = await createInvite(
        deps.db,
        required(request.userId, 'user_id'),
        required(request.teamId, 'team_id'),
        { email: required(request.email, 'email'), role: roleParam(request.role, INVITABLE_ROLES) },
        now(),
        recordAs(ctx, request.userId),
      );
      return { invite: toProtoInvite(invite) };
    },

    async revokeTeamInvite(request, ctx) {
      await revokeInvite(
        deps.db,
        required(request.userId, 'user_id'),
        required(request.teamId, 'team_id'),
        required(request.code, 'code'),
        now(),
        recordAs(ctx, request.userId),
      );
      return {};
    },

    async resendTeamInvite(request, ctx) {
      const invite = await resendInvite(
        deps.db,
        required(request.userId, 'user_id'),
        required(request.teamId, 'team_id'),
        required(request.code, 'code'),
        now(),
        recordAs(ctx, request.userId),
      );
      return { invite: toProtoInvite(invite) };
    },

    async acceptTeamInvite(request, ctx) {
      const team = await acceptInvite(
        deps.db,
        required(request.userId, 'user_id'),
        required(request.code, 'code'),
        now(),
        recordAs(ctx, request.userId),
      );
      await poolChanged(team.id);
      return { team: toProtoTeam(team) };
    },
  };
}

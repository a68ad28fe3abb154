import { useApiMutation, useApiQuery } from '../../api/queries';
import {
  acceptTeamInvite,
  createTeam,
  createTeamInvite,
  getTeam,
  listTeamInvites,
  listTeamMembers,
  listTeamToolServers,
  listTeams,
  removeTeamMember,
  resendTeamInvite,
  revokeTeamInvite,
  updateTeam,
  updateTeamMember,
} from '../../api/routes';
import type { TeamRole } from '../../api/types';

// A team's members, invites and member count all live under /v1/teams, so every write refreshes that tree;
// removing a member also revokes their team keys.
const TEAMS = () => ['/v1/teams'];
const TEAMS_AND_KEYS = () => ['/v1/teams', '/v1/keys'];
const PAGE = { limit: 100 };

export const useTeams = () => useApiQuery(listTeams, { query: PAGE });
export const useTeam = (teamId: string) => useApiQuery(getTeam, { params: { team_id: teamId } });
export const useMembers = (teamId: string) =>
  useApiQuery(listTeamMembers, { params: { team_id: teamId }, query: PAGE });
/** The team's tool-server pool: the servers its team keys reach beside their holder's own. */
export const useTeamToolServers = (teamId: string) =>
  useApiQuery(listTeamToolServers, { params: { team_id: teamId }, query: PAGE });
export const useInvites = (teamId: string) =>
  useApiQuery(listTeamInvites, { params: { team_id: teamId }, query: PAGE });

export const useCreateTeam = () =>
  useApiMutation(createTeam, { input: (name: string) => ({ body: { name } }), invalidates: TEAMS });
export const useRenameTeam = () =>
  useApiMutation(updateTeam, {
    input: ({ teamId, name }: { teamId: string; name: string }) => ({ params: { team_id: teamId }, body: { name } }),
    invalidates: TEAMS,
  });
export const useChangeRole = () =>
  useApiMutation(updateTeamMember, {
    input: ({ teamId, userId, role }: { teamId: string; userId: string; role: TeamRole }) => ({
      params: { team_id: teamId, user_id: userId },
      body: { role },
    }),
    invalidates: TEAMS,
  });
/** The guardrails every key of the team passes through (its own guardrails). */
export const useUpdateTeam = (teamId: string) =>
  useApiMutation(updateTeam, {
    input: (body: { guardrails: string[] }) => ({ params: { team_id: teamId }, body }),
    invalidates: TEAMS,
  });
/** A budget to set, or null to remove it. */
type BudgetBody = { credits: number; period: string; time_zone: string } | null;
export const useSetTeamBudget = () =>
  useApiMutation(updateTeam, {
    input: ({ teamId, budget }: { teamId: string; budget: BudgetBody }) => ({
      params: { team_id: teamId },
      body: { budget },
    }),
    invalidates: TEAMS,
  });
export const useSetMemberBudget = () =>
  useApiMutation(updateTeamMember, {
    input: ({ teamId, userId, budget }: { teamId: string; userId: string; budget: BudgetBody }) => ({
      params: { team_id: teamId, user_id: userId },
      body: { budget },
    }),
    invalidates: TEAMS,
  });
export const useRemoveMember = () =>
  useApiMutation(removeTeamMember, {
    input: ({ teamId, userId }: { teamId: string; userId: string }) => ({
      params: { team_id: teamId, user_id: userId },
    }),
    invalidates: TEAMS_AND_KEYS,
  });

type InviteRef = { teamId: string; code: string };
const inviteParams = ({ teamId, code }: InviteRef) => ({ params: { team_id: teamId, code } });
export const useInvite = () =>
  useApiMutation(createTeamInvite, {
    input: ({ teamId, email, role }: { teamId: string; email: string; role: 'admin' | 'editor' | 'member' }) => ({
      params: { team_id: teamId },
      body: { email, role },
    }),
    invalidates: TEAMS,
  });
export const useResendInvite = () => useApiMutation(resendTeamInvite, { input: inviteParams, invalidates: TEAMS });
export const useRevokeInvite = () => useApiMutation(revokeTeamInvite, { input: inviteParams, invalidates: TEAMS });
export const useAcceptInvite = () =>
  useApiMutation(acceptTeamInvite, { input: (code: string) => ({ params: { code } }), invalidates: TEAMS });

import { z } from 'zod';
import { isTimeZone, parseBudgetPeriod } from '@sbc/budget-periods';
import { DateTime, listOf, NO_CONTENT, pageQuery } from '../common';
import { defineRoute, type RouteAuth } from '../route';

export const TeamRole = z.enum(['owner', 'admin', 'editor', 'member']).meta({ id: 'TeamRole' });
const InvitableRole = z
  .enum(['admin', 'editor', 'member'])
  .meta({ description: 'Owners are made by promotion, never by invite.' });
const SharePolicy = z.enum(['members', 'editors']).meta({
  description:
    'Who may add items to the team pool: every member, or editors, admins and owners only. For MCP tool servers, the ' +
    'servers of the members it names (and who pool them, see `share_defaults.mcp`) are the pool every team key sees.',
});

const ShareDefaults = z
  .object({ mcp: z.boolean(), rules: z.boolean(), skills: z.boolean() })
  .loose()
  .meta({
    id: 'TeamShareDefaults',
    description:
      'What a new member pools by default, set for each member as they join: with `mcp`, their MCP tool servers ' +
      '(`/v1/mcp/servers`) join the pool team keys see at `/mcp`; a member who leaves takes theirs along.',
  });

// The largest cap in credits (CONTRACTS "Budgets and limits": bounded).
const MAX_BUDGET_CREDITS = 1_000_000_000;
const PERIOD_TEXT = 'daily, weekly (from Monday), monthly (from the 1st) or rolling_days:N (N from 1 to 366)';

export const Budget = z
  .object({
    credits: z.number().int(),
    period: z.string(),
    time_zone: z.string(),
    spent: z
      .number()
      .meta({ description: 'Credits spent in the current period (reservations of calls in flight included).' }),
    period_start: DateTime,
    resets_at: DateTime.meta({ description: 'When the next period starts and `spent` starts again from 0.' }),
  })
  .loose()
  .meta({ id: 'Budget', description: `A spend cap over ${PERIOD_TEXT}, in the time zone.` });

const BudgetInput = z
  .strictObject({
    credits: z.number().int().min(1).max(MAX_BUDGET_CREDITS).meta({ description: 'Whole credits.' }),
    period: z
      .string()
      .refine((text) => parseBudgetPeriod(text) !== undefined, { message: `period must be ${PERIOD_TEXT}` }),
    time_zone: z
      .string()
      .refine(isTimeZone, { message: 'time_zone must be an IANA time zone, such as Europe/Paris' })
      .optional()
      .meta({ description: 'An IANA zone the periods follow; UTC when left out.' }),
  })
  .nullable()
  .meta({ id: 'BudgetInput', description: '`null` removes the budget. Owners and admins only.' });

export const Team = z
  .object({
    id: z.string().meta({ description: '`org_…`; the `org_id` of team keys.' }),
    object: z.literal('team'),
    name: z.string(),
    role: TeamRole.meta({ description: "The caller's role in the team." }),
    member_count: z.number().int(),
    created_at: DateTime,
    share_defaults: ShareDefaults,
    share_policy: SharePolicy,
    require_manual_confirm: z.boolean(),
    budget: Budget.nullable().optional().meta({ description: "The cap over every team key's spend; null: none." }),
    guardrails: z.array(z.string()).meta({ description: "The guardrails every team key's calls pass through." }),
  })
  .loose()
  .meta({ id: 'Team' });

export const TeamMember = z
  .object({
    object: z.literal('team_member'),
    user_id: z.string(),
    email: z.string().optional(),
    role: TeamRole,
    groups: z.array(z.string()),
    joined_at: DateTime,
    budget: Budget.nullable()
      .optional()
      .meta({ description: "The member's cap over their team keys, inside the team's; null: none." }),
  })
  .loose()
  .meta({ id: 'TeamMember' });

export const TeamInvite = z
  .object({
    object: z.literal('team_invite'),
    code: z.string().meta({ description: 'The credential the invitee accepts with (24 url-safe characters).' }),
    team_id: z.string().optional(),
    email: z.string(),
    role: TeamRole,
    created_at: DateTime,
    expires_at: DateTime.optional().meta({ description: 'Seven days after the invite was created or last resent.' }),
    sent_count: z.number().int().optional().meta({ description: 'How many times the invite was sent (1 + resends).' }),
    last_sent_at: DateTime.optional(),
  })
  .loose()
  .meta({ id: 'TeamInvite' });

const TeamName = z.string().trim().min(1).max(100);
const ShareDefaultsPatch = z.strictObject({
  mcp: z.boolean().optional(),
  rules: z.boolean().optional(),
  skills: z.boolean().optional(),
});
const Id = z.string().min(1).max(100);

const TeamId = Id.meta({ description: 'The team id (`org_…`).' });
const InviteCode = Id.meta({ description: 'The invite code.' });
const TeamParams = z.object({ team_id: TeamId });
const MemberParams = z.object({
  team_id: TeamId,
  user_id: Id.meta({ description: 'The member’s user id (`usr_…`).' }),
});
const InviteParams = z.object({ team_id: TeamId, code: InviteCode });

const READ: RouteAuth = { kind: 'scoped', scopes: ['teams:read'] };
const WRITE: RouteAuth = { kind: 'scoped', scopes: ['teams:write'] };
const TAG = 'Teams';

// Said once on every team-scoped route so each operation reads on its own.
const ACCESS =
  'A caller who is not a member gets 404; a member whose role does not allow the action gets 403 `insufficient_scope`.';
const PAGING = 'Pages with `limit`, `after_id`, `before_id` (newest first).';

export const listTeams = defineRoute({
  operationId: 'listTeams',
  method: 'get',
  path: '/v1/teams',
  summary: 'List your teams',
  description:
    `The teams the caller is a member of, newest first; the cursors are team ids. ${PAGING} A team key ` +
    `lists its user's teams.`,
  tag: TAG,
  auth: READ,
  query: pageQuery(),
  responses: { 200: { description: 'A page of teams.', schema: listOf(Team, 'TeamList') } },
});

export const createTeam = defineRoute({
  operationId: 'createTeam',
  method: 'post',
  path: '/v1/teams',
  summary: 'Create a team',
  description:
    'The caller becomes its owner. Defaults: every share default on, `share_policy` `members`, ' +
    '`require_manual_confirm` false.',
  tag: TAG,
  auth: WRITE,
  body: z
    .strictObject({
      name: TeamName,
      share_defaults: ShareDefaultsPatch.optional(),
      share_policy: SharePolicy.optional(),
      require_manual_confirm: z.boolean().optional(),
    })
    .meta({ id: 'TeamCreate' }),
  responses: { 201: { description: 'The new team.', schema: Team } },
});

export const getTeam = defineRoute({
  operationId: 'getTeam',
  method: 'get',
  path: '/v1/teams/{team_id}',
  summary: 'Get a team',
  description: `Any member may read the team. ${ACCESS}`,
  tag: TAG,
  auth: READ,
  params: TeamParams,
  responses: { 200: { description: 'The team.', schema: Team } },
  errors: [404],
});

export const updateTeam = defineRoute({
  operationId: 'updateTeam',
  method: 'patch',
  path: '/v1/teams/{team_id}',
  summary: 'Update a team',
  description:
    `Owners and admins change the name and sharing settings; \`share_defaults\` merges (fields left out ` +
    `keep their value). ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: TeamParams,
  body: z
    .strictObject({
      name: TeamName.optional(),
      share_defaults: ShareDefaultsPatch.optional(),
      share_policy: SharePolicy.optional(),
      require_manual_confirm: z.boolean().optional(),
      budget: BudgetInput.optional(),
      guardrails: z
        .array(z.string().min(1).max(64))
        .max(10)
        .optional()
        .meta({ description: "Replaces the team's guardrails (its own): they apply to every team key." }),
    })
    .meta({ id: 'TeamUpdate' }),
  responses: { 200: { description: 'The updated team.', schema: Team } },
  errors: [404],
});

export const deleteTeam = defineRoute({
  operationId: 'deleteTeam',
  method: 'delete',
  path: '/v1/teams/{team_id}',
  summary: 'Delete a team',
  description:
    `Owners only. Members and invites go with it, and every team key on it (\`org_id\`) is ` + `revoked. ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: TeamParams,
  responses: { 204: NO_CONTENT },
  errors: [404],
});

export const listTeamMembers = defineRoute({
  operationId: 'listTeamMembers',
  method: 'get',
  path: '/v1/teams/{team_id}/members',
  summary: 'List members',
  description:
    `Any member may list members, most recently joined first; the cursors are member user ids (an id that ` +
    `is not a member is 400). ${PAGING} ${ACCESS}`,
  tag: TAG,
  auth: READ,
  params: TeamParams,
  query: pageQuery(),
  responses: { 200: { description: 'A page of members.', schema: listOf(TeamMember, 'TeamMemberList') } },
  errors: [404],
});

export const updateTeamMember = defineRoute({
  operationId: 'updateTeamMember',
  method: 'patch',
  path: '/v1/teams/{team_id}/members/{user_id}',
  summary: "Change a member's role",
  description:
    'Owners change anyone, including making and demoting owners. Admins change editors and members, up to admin, and ' +
    'only an owner acts on an admin or owner. ' +
    'Anyone may step down to a lower role. `groups` is managed by the same rule. The last owner cannot be demoted ' +
    '(409 `conflict`): make another owner first. ' +
    `An unknown member is 404 (\`param\` user_id). ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: MemberParams,
  body: z
    .strictObject({
      role: TeamRole.optional(),
      groups: z.array(z.string().min(1).max(64)).max(50).optional(),
      budget: BudgetInput.optional().meta({ description: "At most the team's cap. `null` removes it." }),
    })
    .refine((body) => body.role !== undefined || body.groups !== undefined || body.budget !== undefined, {
      message: 'Pass role, groups, budget or a mix.',
      path: ['role'],
    })
    .meta({ id: 'TeamMemberUpdate' }),
  responses: { 200: { description: 'The member.', schema: TeamMember } },
  errors: [404, 409],
});

export const removeTeamMember = defineRoute({
  operationId: 'removeTeamMember',
  method: 'delete',
  path: '/v1/teams/{team_id}/members/{user_id}',
  summary: 'Remove a member',
  description:
    'Anyone may remove themselves (leave). Owners remove anyone; ' +
    "admins remove editors and members. The member's team " +
    'keys on this team are revoked. ' +
    `The last owner cannot leave or be removed (409 \`conflict\`). ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: MemberParams,
  responses: { 204: NO_CONTENT },
  errors: [404, 409],
});

export const listTeamInvites = defineRoute({
  operationId: 'listTeamInvites',
  method: 'get',
  path: '/v1/teams/{team_id}/invites',
  summary: 'List pending invites',
  description:
    'Invites neither accepted nor revoked, newest first, expired ' +
    'ones included (resend revives them); the cursors are ' +
    'invite codes. ' +
    `Invite codes are credentials, so only owners and admins list them. ${PAGING} ${ACCESS}`,
  tag: TAG,
  auth: READ,
  params: TeamParams,
  query: pageQuery(),
  responses: { 200: { description: 'A page of invites.', schema: listOf(TeamInvite, 'TeamInviteList') } },
  errors: [404],
});

export const createTeamInvite = defineRoute({
  operationId: 'createTeamInvite',
  method: 'post',
  path: '/v1/teams/{team_id}/invites',
  summary: 'Invite someone',
  description:
    'Owners and admins invite by email as admin, editor or member; the code expires after seven days. One pending ' +
    'invite per address: another while it can still be accepted, ' +
    'or inviting a current member, is 409 `conflict` (an expired one is replaced). No mail is sent by the service: ' +
    'hand the code to the invitee. ' +
    ACCESS,
  tag: TAG,
  auth: WRITE,
  params: TeamParams,
  body: z
    .strictObject({ email: z.email().max(254), role: InvitableRole.default('member') })
    .meta({ id: 'TeamInviteCreate' }),
  responses: { 201: { description: 'The invite with its code.', schema: TeamInvite } },
  errors: [404, 409],
});

export const revokeTeamInvite = defineRoute({
  operationId: 'revokeTeamInvite',
  method: 'delete',
  path: '/v1/teams/{team_id}/invites/{code}',
  summary: 'Revoke an invite',
  description:
    `Owners and admins; the code can no longer be accepted. A code that is not pending on this team is ` +
    `404. ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: InviteParams,
  responses: { 204: NO_CONTENT },
  errors: [404],
});

export const resendTeamInvite = defineRoute({
  operationId: 'resendTeamInvite',
  method: 'post',
  path: '/v1/teams/{team_id}/invites/{code}/resend',
  summary: 'Resend an invite',
  description:
    'Owners and admins; counts another sending (`sent_count`, ' +
    '`last_sent_at`) and restarts the seven-day expiry, also ' +
    'of an expired invite. ' +
    `The service records the resend but sends no mail itself. ${ACCESS}`,
  tag: TAG,
  auth: WRITE,
  params: InviteParams,
  responses: { 200: { description: 'The invite.', schema: TeamInvite } },
  errors: [404],
});

export const acceptTeamInvite = defineRoute({
  operationId: 'acceptTeamInvite',
  method: 'post',
  path: '/v1/team_invites/{code}/accept',
  summary: 'Accept an invite',
  description:
    'The user the invite was sent to (signed in, or with a key of theirs holding teams:write; e-mail compared ' +
    'case-insensitively) joins the team with the invite’s role; a code works once. ' +
    'Anyone else holding the code is 403 `insufficient_scope` and the invite stays pending for the invitee. ' +
    'A code that is unknown, expired, revoked or already used is 404; a caller already in the team is 409 and the ' +
    'invite stays pending.',
  tag: TAG,
  auth: WRITE,
  params: z.object({ code: InviteCode }),
  responses: { 200: { description: 'The team joined, with the caller’s role.', schema: Team } },
  errors: [403, 404, 409],
});

export const TEAM_ROUTES = [
  listTeams,
  createTeam,
  getTeam,
  updateTeam,
  deleteTeam,
  listTeamMembers,
  updateTeamMember,
  removeTeamMember,
  listTeamInvites,
  createTeamInvite,
  revokeTeamInvite,
  resendTeamInvite,
  acceptTeamInvite,
];

import type { GuardrailService } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Router } from 'express';
import { teamRoutes as routes } from '@sbc/api';
import { creditsFromMicrocredits, microcreditsForMillicredits, millicredits } from '@sbc/money';
import { listEnvelope, mapPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import type {
  Budget as BudgetMessage,
  BudgetValueSchema,
  Team,
  TeamInvite,
  TeamMember,
  TeamService,
} from '@sbc/proto/sbc/account/v1/teams_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { mount } from '../http/mount';
import type { Budget } from '../limits/budget';
import { memberOwner, spendCapOf, type CapScope } from '../limits/team-caps';

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value) : new Date(0)).toISOString();

/** A reply without its message is a bug in the account service: a 500, never a half-rendered body. */
function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the account service answered without a ${what}`);
  return value;
}

type BudgetView = Record<string, unknown> | null;

/** A cap of the page being rendered: whose it is and as the account service holds it. */
interface CapOf {
  scope: CapScope;
  owner: string;
  budget: BudgetMessage | undefined;
}

/**
 * The `budget` of each team or member: its cap with what it has spent this period and when the period ends,
 * read from the shared store in one round trip for the whole page; null where no cap is set.
 */
async function budgetViews(budget: Pick<Budget, 'capSpend'>, caps: readonly CapOf[]): Promise<BudgetView[]> {
  const known = caps.flatMap(({ scope, owner, budget: message }) => {
    const cap = spendCapOf(message);
    return cap ? [{ scope, owner, cap }] : [];
  });
  const spend = known.length > 0 ? await budget.capSpend(known) : [];
  let next = 0;
  return caps.map(({ budget: message }) => {
    if (!spendCapOf(message)) return null;
    const { cap } = known[next]!;
    const { spentMilli, window } = spend[next++]!;
    return {
      credits: cap.credits,
      period: cap.periodText,
      time_zone: cap.timeZone,
      spent: creditsFromMicrocredits(microcreditsForMillicredits(millicredits(spentMilli))),
      period_start: window.start.toISOString(),
      resets_at: window.end.toISOString(),
    };
  });
}

/** A budget change for the account service: `null` removes the budget, absent leaves it alone. */
function budgetChange(
  body: { credits: number; period: string; time_zone?: string } | null | undefined,
): MessageInitShape<typeof BudgetValueSchema> | undefined {
  if (body === undefined) return undefined;
  if (body === null) return {};
  return { value: { credits: BigInt(body.credits), period: body.period, timeZone: body.time_zone ?? 'UTC' } };
}

function renderTeam(team: Team | undefined, budget: BudgetView = null): Record<string, unknown> {
  const t = present(team, 'team');
  return {
    id: t.id,
    object: 'team',
    name: t.name,
    role: t.role,
    member_count: t.memberCount,
    created_at: iso(t.createdAt),
    share_defaults: {
      mcp: t.shareDefaults?.mcp ?? false,
      rules: t.shareDefaults?.rules ?? false,
      skills: t.shareDefaults?.skills ?? false,
    },
    share_policy: t.sharePolicy,
    require_manual_confirm: t.requireManualConfirm,
    budget,
    guardrails: t.guardrailIds,
  };
}

function renderMember(member: TeamMember | undefined, budget: BudgetView = null): Record<string, unknown> {
  const m = present(member, 'member');
  return {
    object: 'team_member',
    user_id: m.userId,
    email: m.email,
    role: m.role,
    groups: m.groups,
    joined_at: iso(m.joinedAt),
    budget,
  };
}

function renderInvite(invite: TeamInvite | undefined): Record<string, unknown> {
  const i = present(invite, 'invite');
  return {
    object: 'team_invite',
    code: i.code,
    team_id: i.teamId,
    email: i.email,
    role: i.role,
    created_at: iso(i.createdAt),
    expires_at: iso(i.expiresAt),
    sent_count: i.sentCount,
    last_sent_at: iso(i.lastSentAt),
  };
}

const pageOf = (query: PageQuery) => ({ limit: query.limit, afterId: query.after_id, beforeId: query.before_id });

/** The account service returns a page already in list order; the edge adds the envelope's cursors. */
function envelope<T>(
  items: T[],
  hasMore: boolean,
  render: (item: T) => Record<string, unknown>,
  idOf: (item: T) => string,
): ListEnvelope<Record<string, unknown>> {
  return mapPage(listEnvelope(items, hasMore, idOf), render);
}

/**
 * The thirteen team routes. The account service applies the role rules for the calling user (a team key
 * acts for its key's user); the edge validates, forwards and renders.
 */
export function teamRoutes(deps: {
  authorize: Authorize;
  teams: RpcClientOf<typeof TeamService>;
  guardrails: RpcClientOf<typeof GuardrailService>;
  budget: Pick<Budget, 'capSpend'>;
}): Router {
  const router = Router();
  const { teams, authorize } = deps;
  const teamCap = (team: Team): CapOf => ({ scope: 'team', owner: team.id, budget: team.budget });
  /** Teams rendered with their budgets. */
  async function renderTeams(list: Team[]): Promise<Record<string, unknown>[]> {
    const budgets = await budgetViews(deps.budget, list.map(teamCap));
    return list.map((team, i) => renderTeam(team, budgets[i]));
  }
  const renderOne = async (team: Team | undefined) => (await renderTeams([present(team, 'team')]))[0]!;
  async function renderMembers(teamId: string, list: TeamMember[]): Promise<Record<string, unknown>[]> {
    const caps = list.map((m): CapOf => ({ scope: 'member', owner: memberOwner(teamId, m.userId), budget: m.budget }));
    const budgets = await budgetViews(deps.budget, caps);
    return list.map((member, i) => renderMember(member, budgets[i]));
  }

  mount(router, routes.listTeams, authorize, async ({ principal, query, requestId }) => {
    const reply = await teams.listTeams({ userId: principal.userId, page: pageOf(query) }, { requestId });
    const rendered = await renderTeams(reply.teams);
    return {
      status: 200,
      body: envelope(
        rendered,
        reply.hasMore,
        (team) => team,
        (team) => team.id as string,
      ),
    };
  });

  mount(router, routes.createTeam, authorize, async ({ principal, body, rpc }) => {
    const reply = await teams.createTeam(
      {
        userId: principal.userId,
        name: body.name,
        shareDefaults: body.share_defaults,
        sharePolicy: body.share_policy,
        requireManualConfirm: body.require_manual_confirm,
      },
      rpc,
    );
    return { status: 201, body: renderTeam(reply.team) };
  });

  mount(router, routes.getTeam, authorize, async ({ principal, params, requestId }) => {
    const reply = await teams.getTeam({ userId: principal.userId, teamId: params.team_id }, { requestId });
    return { status: 200, body: await renderOne(reply.team) };
  });

  mount(router, routes.updateTeam, authorize, async ({ principal, params, body, rpc }) => {
    // The guardrail ids are checked and set first: a bad one is a 400 before anything else changes.
    if (body.guardrails)
      await deps.guardrails.setTeamGuardrails(
        { userId: principal.userId, teamId: params.team_id, guardrailIds: body.guardrails },
        rpc,
      );
    const reply = await teams.updateTeam(
      {
        userId: principal.userId,
        teamId: params.team_id,
        name: body.name,
        shareDefaults: body.share_defaults,
        sharePolicy: body.share_policy,
        requireManualConfirm: body.require_manual_confirm,
        budget: budgetChange(body.budget),
      },
      rpc,
    );
    return { status: 200, body: await renderOne(reply.team) };
  });

  mount(router, routes.deleteTeam, authorize, async ({ principal, params, rpc }) => {
    await teams.deleteTeam({ userId: principal.userId, teamId: params.team_id }, rpc);
    return { status: 204 };
  });

  mount(router, routes.listTeamMembers, authorize, async ({ principal, params, query, requestId }) => {
    const reply = await teams.listTeamMembers(
      { userId: principal.userId, teamId: params.team_id, page: pageOf(query) },
      { requestId },
    );
    const rendered = await renderMembers(params.team_id, reply.members);
    return {
      status: 200,
      body: envelope(
        rendered,
        reply.hasMore,
        (m) => m,
        (m) => m.user_id as string,
      ),
    };
  });

  mount(router, routes.updateTeamMember, authorize, async ({ principal, params, body, rpc }) => {
    const reply = await teams.updateTeamMember(
      {
        userId: principal.userId,
        teamId: params.team_id,
        memberUserId: params.user_id,
        role: body.role,
        groups: body.groups && { values: body.groups },
        budget: budgetChange(body.budget),
      },
      rpc,
    );
    return { status: 200, body: (await renderMembers(params.team_id, [present(reply.member, 'member')]))[0]! };
  });

  mount(router, routes.removeTeamMember, authorize, async ({ principal, params, rpc }) => {
    await teams.removeTeamMember(
      { userId: principal.userId, teamId: params.team_id, memberUserId: params.user_id },
      rpc,
    );
    return { status: 204 };
  });

  mount(router, routes.listTeamInvites, authorize, async ({ principal, params, query, requestId }) => {
    const reply = await teams.listTeamInvites(
      { userId: principal.userId, teamId: params.team_id, page: pageOf(query) },
      { requestId },
    );
    return { status: 200, body: envelope(reply.invites, reply.hasMore, renderInvite, (invite) => invite.code) };
  });

  mount(router, routes.createTeamInvite, authorize, async ({ principal, params, body, rpc }) => {
    const reply = await teams.createTeamInvite(
      { userId: principal.userId, teamId: params.team_id, email: body.email, role: body.role },
      rpc,
    );
    return { status: 201, body: renderInvite(reply.invite) };
  });

  mount(router, routes.revokeTeamInvite, authorize, async ({ principal, params, rpc }) => {
    await teams.revokeTeamInvite({ userId: principal.userId, teamId: params.team_id, code: params.code }, rpc);
    return { status: 204 };
  });

  mount(router, routes.resendTeamInvite, authorize, async ({ principal, params, rpc }) => {
    const reply = await teams.resendTeamInvite(
      { userId: principal.userId, teamId: params.team_id, code: params.code },
      rpc,
    );
    return { status: 200, body: renderInvite(reply.invite) };
  });

  mount(router, routes.acceptTeamInvite, authorize, async ({ principal, params, rpc }) => {
    const reply = await teams.acceptTeamInvite({ userId: principal.userId, code: params.code }, rpc);
    return { status: 200, body: await renderOne(reply.team) };
  });

  return router;
}

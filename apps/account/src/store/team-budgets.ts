import { ApiError } from '@sbc/errors';
import { isTimeZone, localDate, parseBudgetPeriod } from '@sbc/budget-periods';
import { Prisma, type PrismaClient as AccountDb } from '../generated/prisma/client';
import { refuseTeamUpdate } from '../teams/permissions';
import { budgetOf, type StoredBudget } from './budget-column';
import type { RecordChange } from './audit';
import { lockTeam, memberChange, refuse, seatOf, teamChange, type RevokedKeys, type TeamDb } from './teams';

/** A budget as a request sets it. */
export interface BudgetInput {
  credits: number;
  period: string;
  timeZone?: string;
}

/** The largest cap: the edge counts millicredits in a safe integer, far above this. */
const MAX_BUDGET_CREDITS = 1_000_000_000;

function invalid(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
}

/** Checks a budget the edge already validated (any other caller of the RPC too) and stamps its anchor. */
export function storedBudget(input: BudgetInput, now: Date): StoredBudget {
  if (!Number.isSafeInteger(input.credits) || input.credits < 1 || input.credits > MAX_BUDGET_CREDITS)
    throw invalid(
      'budget.credits',
      `budget.credits must be a whole number of credits from 1 to ${MAX_BUDGET_CREDITS}.`,
    );
  if (!parseBudgetPeriod(input.period))
    throw invalid('budget.period', 'budget.period must be daily, weekly, monthly or rolling_days:N (N from 1 to 366).');
  const timeZone = input.timeZone || 'UTC';
  if (!isTimeZone(timeZone)) throw invalid('budget.time_zone', `budget.time_zone "${timeZone}" is not an IANA zone.`);
  return { credits: input.credits, period: input.period, time_zone: timeZone, anchor: localDate(now, timeZone) };
}

const jsonOf = (budget: StoredBudget | null) => (budget === null ? Prisma.DbNull : { ...budget });

/** The live team keys a cap applies to (one member's when `userId` is given): their cached principals go stale. */
async function liveTeamKeys(tx: TeamDb, teamId: string, userId?: string): Promise<RevokedKeys> {
  const keys = await tx.callerKey.findMany({
    where: { orgId: teamId, revokedAt: null, ...(userId ? { userId } : {}) },
    select: { keyHash: true },
  });
  return { keyHashes: keys.map((key) => Buffer.from(key.keyHash)) };
}

/**
 * Sets (or with null removes) the team's cap; owners and admins only. A cap below a member's own is refused:
 * a member's cap sits inside the team's. Returns the team keys whose cached principals now hold the old cap.
 */
export async function setTeamBudget(
  db: AccountDb,
  userId: string,
  teamId: string,
  budget: StoredBudget | null,
  record: RecordChange,
): Promise<RevokedKeys> {
  return db.$transaction(async (tx) => {
    await lockTeam(tx, teamId);
    refuse(refuseTeamUpdate((await seatOf(tx, teamId, userId)).role));
    if (budget) {
      const members = await tx.teamMember.findMany({ where: { teamId }, select: { budget: true } });
      const highest = Math.max(0, ...members.map((member) => budgetOf(member.budget)?.credits ?? 0));
      if (highest > budget.credits)
        throw invalid(
          'budget.credits',
          `A member's cap is ${highest} credits, above ${budget.credits}; lower the member caps first.`,
        );
    }
    const before = await tx.team.findUniqueOrThrow({ where: { id: teamId } });
    const after = await tx.team.update({ where: { id: teamId }, data: { budget: jsonOf(budget) } });
    await record(tx, teamChange('team.budget', before, after));
    return liveTeamKeys(tx, teamId);
  });
}

/** Sets (or with null removes) a member's cap inside the team's; owners and admins only. */
export async function setMemberBudget(
  db: AccountDb,
  userId: string,
  teamId: string,
  memberId: string,
  budget: StoredBudget | null,
  record: RecordChange,
): Promise<RevokedKeys> {
  return db.$transaction(async (tx) => {
    await lockTeam(tx, teamId);
    refuse(refuseTeamUpdate((await seatOf(tx, teamId, userId)).role));
    const member = await tx.teamMember.findUnique({ where: { teamId_userId: { teamId, userId: memberId } } });
    if (!member) throw new ApiError('not_found', 'No such member of this team.', { param: 'user_id' });
    if (budget) {
      const team = budgetOf((await tx.team.findUniqueOrThrow({ where: { id: teamId } })).budget);
      if (team && budget.credits > team.credits)
        throw invalid('budget.credits', `A member's cap must be within the team's (${team.credits} credits).`);
    }
    const after = await tx.teamMember.update({
      where: { teamId_userId: { teamId, userId: memberId } },
      data: { budget: jsonOf(budget) },
    });
    await record(tx, memberChange('team_member.budget', member, after));
    return liveTeamKeys(tx, teamId, memberId);
  });
}

/** The caps a team key spends under: its team's and its user's in the team (null where none is set). */
export async function teamCapsOf(
  db: TeamDb,
  teamId: string,
  userId: string,
): Promise<{ team: StoredBudget | null; member: StoredBudget | null }> {
  const [team, member] = await Promise.all([
    db.team.findUnique({ where: { id: teamId }, select: { budget: true } }),
    db.teamMember.findUnique({ where: { teamId_userId: { teamId, userId } }, select: { budget: true } }),
  ]);
  return { team: budgetOf(team?.budget ?? null), member: budgetOf(member?.budget ?? null) };
}

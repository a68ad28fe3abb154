import { newId } from '@sbc/ids';
import type { Scope } from '@sbc/scopes';
import type { AccountSurfaceStack } from './stack';

/** A signed-up user with a Full access caller key. */
export interface TeamUser {
  id: string;
  email: string;
  key: string;
}

/**
 * Team fixtures over the account surface: users and keys are seeded, everything about teams goes through
 * the HTTP routes, so each test exercises the same path a caller does.
 */
export function teamFixtures(stack: AccountSurfaceStack) {
  const user = async (scopes?: readonly Scope[]): Promise<TeamUser> => {
    const email = `${newId('usr').toLowerCase()}@example.test`;
    const id = await stack.seedUser(email);
    const { secret } = await stack.seedKey({ userId: id, scopes });
    return { id, email, key: secret };
  };

  const createTeam = async (owner: TeamUser, name = 'Core'): Promise<{ id: string }> => {
    const answer = await stack.api('POST', '/v1/teams', { key: owner.key, body: { name } });
    expect(answer.status).toBe(201);
    return answer.body;
  };

  const invite = async (
    teamId: string,
    by: TeamUser,
    email: string,
    role = 'member',
  ): Promise<{ code: string; expires_at: string; sent_count: number }> => {
    const answer = await stack.api('POST', `/v1/teams/${teamId}/invites`, { key: by.key, body: { email, role } });
    expect(answer.status).toBe(201);
    return answer.body;
  };

  /** Invites `who` (by `by`) and accepts as them. */
  const join = async (teamId: string, by: TeamUser, who: TeamUser, role = 'member'): Promise<void> => {
    const { code } = await invite(teamId, by, who.email, role);
    const accepted = await stack.api('POST', `/v1/team_invites/${code}/accept`, { key: who.key });
    expect(accepted.status).toBe(200);
  };

  /** A team owned by a fresh user, with one fresh user per further role. */
  const teamWithRoles = async () => {
    const [owner, admin, editor, member] = await Promise.all([user(), user(), user(), user()]);
    const team = await createTeam(owner!);
    await join(team.id, owner!, admin!, 'admin');
    await join(team.id, owner!, editor!, 'editor');
    await join(team.id, owner!, member!, 'member');
    return { team, owner: owner!, admin: admin!, editor: editor!, member: member! };
  };

  return { user, createTeam, invite, join, teamWithRoles };
}

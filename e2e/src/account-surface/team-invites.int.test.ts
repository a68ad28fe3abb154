import { startStack, type AccountSurfaceStack } from '../support/stack';
import { teamFixtures } from '../support/teams.harness';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('team invites', () => {
  let stack: AccountSurfaceStack;
  let fx: ReturnType<typeof teamFixtures>;
  beforeAll(async () => {
    stack = await startStack({ label: 'team_invites' });
    fx = teamFixtures(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const accept = (code: string, key: string) => stack.api('POST', `/v1/team_invites/${code}/accept`, { key });
  /** Moves an invite's expiry, as time passing would. */
  const expireAt = (code: string, at: Date) =>
    stack.account.database.prisma.teamInvite.update({ where: { code }, data: { expiresAt: at } });

  it('an invite accepted by another user makes them a member with its role, once', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    const invitee = await fx.user();
    const before = Date.now();
    const invite = await stack.api('POST', `/v1/teams/${team.id}/invites`, {
      key: owner.key,
      body: { email: invitee.email.toUpperCase(), role: 'editor' },
    });
    expect(invite.status).toBe(201);
    expect(invite.body).toMatchObject({
      object: 'team_invite',
      team_id: team.id,
      email: invitee.email,
      role: 'editor',
      sent_count: 1,
    });
    expect(invite.body.code).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const expires = Date.parse(invite.body.expires_at) - before;
    expect(expires).toBeGreaterThan(7 * DAY_MS - 60_000);
    expect(expires).toBeLessThanOrEqual(7 * DAY_MS + 60_000);
    const listed = await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: owner.key });
    expect(listed.body.data.map((item: { code: string }) => item.code)).toEqual([invite.body.code]);

    const joined = await accept(invite.body.code, invitee.key);
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ object: 'team', id: team.id, role: 'editor', member_count: 2 });
    const members = await stack.api('GET', `/v1/teams/${team.id}/members`, { key: invitee.key });
    expect(members.body.data[0]).toMatchObject({ user_id: invitee.id, email: invitee.email, role: 'editor' });
    expect((await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: owner.key })).body.data).toEqual([]);

    const used = await accept(invite.body.code, (await fx.user()).key);
    expect(used).toMatchObject({ status: 404, body: { error: 'not_found', param: 'code' } });
  });

  it('a signed-in session can accept an invite', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    const invitee = await fx.user();
    const { code } = await fx.invite(team.id, owner, invitee.email);
    const session = await stack.seedSession(invitee.id);
    const joined = await accept(code, session);
    expect(joined.body).toMatchObject({ id: team.id, role: 'member' });
  });

  it('accepting needs teams:write', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    const invitee = await fx.user();
    const { code } = await fx.invite(team.id, owner, invitee.email);
    const readOnly = await stack.seedKey({ userId: invitee.id, scopes: ['teams:read'] });
    const refused = await accept(code, readOnly.secret);
    expect(refused).toMatchObject({
      status: 403,
      body: { error: 'insufficient_scope', required_scopes: ['teams:write'] },
    });
    expect((await stack.api('POST', `/v1/team_invites/${code}/accept`)).status).toBe(401);
  });

  it(
    'an invite is for the address it was sent to: anyone else holding the code gets 403 and it stays usable by the ' +
      'invitee',
    async () => {
      const owner = await fx.user();
      const team = await fx.createTeam(owner);
      const carol = await fx.user();
      const bob = await fx.user();
      const { code } = await fx.invite(team.id, owner, carol.email.toUpperCase(), 'admin');

      const byBob = await accept(code, bob.key);
      expect(byBob).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
      expect(JSON.stringify(byBob.body)).not.toContain(carol.email);
      const bobSession = await stack.seedSession(bob.id);
      expect((await accept(code, bobSession)).status).toBe(403);
      expect((await stack.api('GET', `/v1/teams/${team.id}`, { key: bob.key })).status).toBe(404);
      expect(
        (await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: owner.key })).body.data.map(
          (item: { code: string }) => item.code,
        ),
      ).toEqual([code]);

      const byCarol = await accept(code, carol.key);
      expect(byCarol).toMatchObject({ status: 200, body: { id: team.id, role: 'admin' } });
    },
  );

  it('a caller already in the team gets 409 and the invite stays pending', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    const invitee = await fx.user();
    const { code } = await fx.invite(team.id, owner, invitee.email);
    // Joined meanwhile by some other way than this code.
    await stack.account.database.prisma.teamMember.create({
      data: { teamId: team.id, userId: invitee.id, role: 'member', joinedAt: new Date() },
    });
    expect(await accept(code, invitee.key)).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect((await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: owner.key })).body.data).toHaveLength(1);
  });

  it('one pending invite per address; inviting a member is 409; an expired invite is replaced', async () => {
    const { team, owner, member } = await fx.teamWithRoles();
    const first = await fx.invite(team.id, owner, 'twice@example.test');
    const again = await stack.api('POST', `/v1/teams/${team.id}/invites`, {
      key: owner.key,
      body: { email: 'TWICE@example.test' },
    });
    expect(again).toMatchObject({ status: 409, body: { error: 'conflict', param: 'email' } });
    const existing = await stack.api('POST', `/v1/teams/${team.id}/invites`, {
      key: owner.key,
      body: { email: member.email },
    });
    expect(existing).toMatchObject({ status: 409, body: { param: 'email' } });

    await expireAt(first.code, new Date(Date.now() - 1000));
    const replacement = await fx.invite(team.id, owner, 'twice@example.test');
    const listed = await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: owner.key });
    expect(listed.body.data.map((item: { code: string }) => item.code)).toEqual([replacement.code]);
  });

  it('resend counts the sending and restarts the seven-day expiry', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    const invite = await fx.invite(team.id, owner, 'resend@example.test');
    await expireAt(invite.code, new Date(Date.now() + 60_000));
    const resent = await stack.api('POST', `/v1/teams/${team.id}/invites/${invite.code}/resend`, { key: owner.key });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ code: invite.code, sent_count: 2 });
    expect(Date.parse(resent.body.expires_at)).toBeGreaterThan(Date.now() + 7 * DAY_MS - 60_000);
    expect(Date.parse(resent.body.last_sent_at)).toBeGreaterThanOrEqual(Date.parse(resent.body.created_at));
  });

  it('an expired invite cannot be accepted until it is resent', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    const invitee = await fx.user();
    const { code } = await fx.invite(team.id, owner, invitee.email);
    await expireAt(code, new Date(Date.now() - 1000));
    expect(await accept(code, invitee.key)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    // Still listed (pending, expired), so a manager can revive it.
    expect((await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: owner.key })).body.data).toHaveLength(1);
    expect((await stack.api('POST', `/v1/teams/${team.id}/invites/${code}/resend`, { key: owner.key })).status).toBe(
      200,
    );
    expect((await accept(code, invitee.key)).status).toBe(200);
  });

  it('a revoked invite cannot be accepted, revoked again or resent', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    const invitee = await fx.user();
    const { code } = await fx.invite(team.id, owner, invitee.email);
    expect((await stack.api('DELETE', `/v1/teams/${team.id}/invites/${code}`, { key: owner.key })).status).toBe(204);
    expect((await accept(code, invitee.key)).status).toBe(404);
    expect((await stack.api('DELETE', `/v1/teams/${team.id}/invites/${code}`, { key: owner.key })).status).toBe(404);
    expect((await stack.api('POST', `/v1/teams/${team.id}/invites/${code}/resend`, { key: owner.key })).status).toBe(
      404,
    );
    expect((await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: owner.key })).body.data).toEqual([]);
    expect((await accept('no-such-code', invitee.key)).status).toBe(404);
  });

  it('an invite code of one team is unknown on another', async () => {
    const owner = await fx.user();
    const [a, b] = [await fx.createTeam(owner, 'a'), await fx.createTeam(owner, 'b')];
    const { code } = await fx.invite(a.id, owner, 'cross@example.test');
    expect((await stack.api('POST', `/v1/teams/${b.id}/invites/${code}/resend`, { key: owner.key })).status).toBe(404);
    expect((await stack.api('DELETE', `/v1/teams/${b.id}/invites/${code}`, { key: owner.key })).status).toBe(404);
  });

  it('only owners and admins see and manage invites; no one invites an owner', async () => {
    const { team, owner, admin, editor, member } = await fx.teamWithRoles();
    const byAdmin = await fx.invite(team.id, admin, 'by-admin@example.test', 'admin');
    expect(byAdmin).toMatchObject({ role: 'admin' });
    for (const who of [editor, member]) {
      const listed = await stack.api('GET', `/v1/teams/${team.id}/invites`, { key: who.key });
      expect(listed).toMatchObject({
        status: 403,
        body: { error: 'insufficient_scope', required_scopes: ['teams:read'] },
      });
      const invited = await stack.api('POST', `/v1/teams/${team.id}/invites`, {
        key: who.key,
        body: { email: 'x@example.test' },
      });
      expect(invited).toMatchObject({
        status: 403,
        body: { error: 'insufficient_scope', required_scopes: ['teams:write'] },
      });
      expect(
        (await stack.api('POST', `/v1/teams/${team.id}/invites/${byAdmin.code}/resend`, { key: who.key })).status,
      ).toBe(403);
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/invites/${byAdmin.code}`, { key: who.key })).status).toBe(
        403,
      );
    }
    const asOwner = await stack.api('POST', `/v1/teams/${team.id}/invites`, {
      key: owner.key,
      body: { email: 'o@example.test', role: 'owner' },
    });
    expect(asOwner).toMatchObject({ status: 400, body: { error: 'invalid_request', param: 'role' } });
    const badEmail = await stack.api('POST', `/v1/teams/${team.id}/invites`, {
      key: owner.key,
      body: { email: 'not an email', note: 'hi' },
    });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(['body', 'email']);
    expect((await stack.api('DELETE', `/v1/teams/${team.id}/invites/${byAdmin.code}`, { key: admin.key })).status).toBe(
      204,
    );
  });

  it('the invite list pages by code, newest first', async () => {
    const owner = await fx.user();
    const team = await fx.createTeam(owner);
    for (let i = 0; i < 5; i += 1) await fx.invite(team.id, owner, `page-${i}@example.test`);
    const all: Array<{ code: string; email: string }> = (
      await stack.api('GET', `/v1/teams/${team.id}/invites?limit=100`, { key: owner.key })
    ).body.data;
    expect(all.map((item) => item.email)).toEqual([4, 3, 2, 1, 0].map((i) => `page-${i}@example.test`));
    const first = await stack.api('GET', `/v1/teams/${team.id}/invites?limit=2`, { key: owner.key });
    const second = await stack.api('GET', `/v1/teams/${team.id}/invites?limit=2&after_id=${first.body.last_id}`, {
      key: owner.key,
    });
    const third = await stack.api('GET', `/v1/teams/${team.id}/invites?limit=2&after_id=${second.body.last_id}`, {
      key: owner.key,
    });
    expect([first, second, third].flatMap((page) => page.body.data.map((item: { code: string }) => item.code))).toEqual(
      all.map((item) => item.code),
    );
    expect([first.body.has_more, second.body.has_more, third.body.has_more]).toEqual([true, true, false]);
    const back = await stack.api('GET', `/v1/teams/${team.id}/invites?limit=2&before_id=${third.body.first_id}`, {
      key: owner.key,
    });
    expect(back.body.data.map((item: { code: string }) => item.code)).toEqual(
      second.body.data.map((item: { code: string }) => item.code),
    );
  });
});

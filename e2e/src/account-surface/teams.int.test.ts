import { SCOPES } from '@sbc/scopes';
import { startStack, type AccountSurfaceStack } from '../support/stack';
import { teamFixtures } from '../support/teams.harness';

describe('teams and members', () => {
  let stack: AccountSurfaceStack;
  let fx: ReturnType<typeof teamFixtures>;
  beforeAll(async () => {
    stack = await startStack({ label: 'teams' });
    fx = teamFixtures(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const role = async (teamId: string, key: string) =>
    (await stack.api('GET', `/v1/teams/${teamId}`, { key })).body.role;

  describe('teams', () => {
    it('creating a team makes the caller its owner, with the default settings', async () => {
      const owner = await fx.user();
      const created = await stack.api('POST', '/v1/teams', { key: owner.key, body: { name: 'Platform' } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        object: 'team',
        name: 'Platform',
        role: 'owner',
        member_count: 1,
        share_defaults: { mcp: true, rules: true, skills: true },
        share_policy: 'members',
        require_manual_confirm: false,
      });
      expect(created.body.id).toMatch(/^org_[0-9A-Z]{26}$/);

      const got = await stack.api('GET', `/v1/teams/${created.body.id}`, { key: owner.key });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ id: created.body.id, role: 'owner', created_at: created.body.created_at });
      const members = await stack.api('GET', `/v1/teams/${created.body.id}/members`, { key: owner.key });
      expect(members.body.data).toEqual([
        expect.objectContaining({
          object: 'team_member',
          user_id: owner.id,
          email: owner.email,
          role: 'owner',
          groups: [],
        }),
      ]);
    });

    it('lists only the caller’s teams, newest first, in pages', async () => {
      const owner = await fx.user();
      const ids = [];
      for (const name of ['one', 'two', 'three']) ids.push((await fx.createTeam(owner, name)).id);
      await fx.createTeam(await fx.user(), 'someone else’s');
      const first = await stack.api('GET', '/v1/teams?limit=2', { key: owner.key });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ object: 'list', has_more: true, first_id: ids[2], last_id: ids[1] });
      const next = await stack.api('GET', `/v1/teams?limit=2&after_id=${first.body.last_id}`, { key: owner.key });
      expect(next.body.data.map((team: { id: string }) => team.id)).toEqual([ids[0]]);
      expect(next.body.has_more).toBe(false);
      const back = await stack.api('GET', `/v1/teams?limit=2&before_id=${ids[0]}`, { key: owner.key });
      expect(back.body.data.map((team: { id: string }) => team.id)).toEqual([ids[2], ids[1]]);
    });

    it('owners and admins change settings, share_defaults merging; editors and members get 403', async () => {
      const { team, owner, admin, editor, member } = await fx.teamWithRoles();
      const changed = await stack.api('PATCH', `/v1/teams/${team.id}`, {
        key: owner.key,
        body: { name: 'Renamed', share_defaults: { mcp: false }, share_policy: 'editors' },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({
        name: 'Renamed',
        share_defaults: { mcp: false, rules: true, skills: true },
        share_policy: 'editors',
        member_count: 4,
      });
      const byAdmin = await stack.api('PATCH', `/v1/teams/${team.id}`, {
        key: admin.key,
        body: { require_manual_confirm: true },
      });
      expect(byAdmin.body).toMatchObject({
        role: 'admin',
        require_manual_confirm: true,
        share_defaults: { mcp: false },
      });
      for (const who of [editor, member]) {
        const refused = await stack.api('PATCH', `/v1/teams/${team.id}`, { key: who.key, body: { name: 'Mine' } });
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['teams:write'] });
      }
    });

    it('only an owner deletes a team; its members lose it and its team keys stop working', async () => {
      const { team, owner, admin, member } = await fx.teamWithRoles();
      const teamKey = await stack.seedKey({ userId: member.id, orgId: team.id, scopes: ['teams:read'] });
      expect((await stack.api('GET', '/v1/teams', { key: teamKey.secret })).status).toBe(200);
      const refused = await stack.api('DELETE', `/v1/teams/${team.id}`, { key: admin.key });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toMatch(/owner/);
      expect((await stack.api('DELETE', `/v1/teams/${team.id}`, { key: owner.key })).status).toBe(204);
      expect((await stack.api('GET', `/v1/teams/${team.id}`, { key: member.key })).status).toBe(404);
      const revoked = await stack.api('GET', '/v1/teams', { key: teamKey.secret });
      expect(revoked.status).toBe(403);
    });
  });

  describe('who may call', () => {
    it('no credential is 401', async () => {
      const answer = await stack.api('GET', '/v1/teams');
      expect(answer.status).toBe(401);
      expect(answer.body.error).toBe('unauthorized');
    });

    it('a key lacking teams:read or teams:write gets 403 insufficient_scope with required_scopes', async () => {
      const owner = await fx.user();
      const team = await fx.createTeam(owner);
      const noRead = await stack.seedKey({
        userId: owner.id,
        scopes: SCOPES.filter((scope) => scope !== 'teams:read'),
      });
      const readOnly = await stack.seedKey({ userId: owner.id, scopes: ['teams:read'] });
      const listed = await stack.api('GET', `/v1/teams/${team.id}/members`, { key: noRead.secret });
      expect(listed.status).toBe(403);
      expect(listed.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['teams:read'] });
      expect((await stack.api('GET', `/v1/teams/${team.id}`, { key: readOnly.secret })).status).toBe(200);
      const written = await stack.api('PATCH', `/v1/teams/${team.id}`, { key: readOnly.secret, body: { name: 'x' } });
      expect(written.status).toBe(403);
      expect(written.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['teams:write'] });
    });

    it('a team key acts for its user and never writes, whatever it stores', async () => {
      const owner = await fx.user();
      const team = await fx.createTeam(owner);
      const teamKey = await stack.seedKey({ userId: owner.id, orgId: team.id });
      expect((await stack.api('GET', `/v1/teams/${team.id}`, { key: teamKey.secret })).body.role).toBe('owner');
      const refused = await stack.api('POST', '/v1/teams', { key: teamKey.secret, body: { name: 'From a team key' } });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['teams:write'] });
    });

    it('a non-member gets 404 for the team and everything under it, never 403', async () => {
      const owner = await fx.user();
      const team = await fx.createTeam(owner);
      const stranger = await fx.user();
      const calls: Array<[string, string, unknown?]> = [
        ['GET', `/v1/teams/${team.id}`],
        ['PATCH', `/v1/teams/${team.id}`, { name: 'x' }],
        ['DELETE', `/v1/teams/${team.id}`],
        ['GET', `/v1/teams/${team.id}/members`],
        ['PATCH', `/v1/teams/${team.id}/members/${owner.id}`, { role: 'member' }],
        ['DELETE', `/v1/teams/${team.id}/members/${owner.id}`],
        ['GET', `/v1/teams/${team.id}/invites`],
        ['POST', `/v1/teams/${team.id}/invites`, { email: 'a@example.test' }],
        ['DELETE', `/v1/teams/${team.id}/invites/nope`],
        ['POST', `/v1/teams/${team.id}/invites/nope/resend`],
      ];
      for (const [method, path, body] of calls) {
        const answer = await stack.api(method, path, { key: stranger.key, body });
        expect({ method, path, status: answer.status, error: answer.body.error }).toEqual({
          method,
          path,
          status: 404,
          error: 'not_found',
        });
      }
      expect((await stack.api('GET', '/v1/teams/org_00000000000000000000000000', { key: owner.key })).status).toBe(404);
    });

    it('bad bodies and queries are 400 invalid_request with param and issues', async () => {
      const owner = await fx.user();
      const team = await fx.createTeam(owner);
      const created = await stack.api('POST', '/v1/teams', { key: owner.key, body: { name: '', colour: 'red' } });
      expect(created.status).toBe(400);
      expect(created.body.error).toBe('invalid_request');
      expect(created.body.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(['body', 'name']);
      const patched = await stack.api('PATCH', `/v1/teams/${team.id}`, {
        key: owner.key,
        body: { share_policy: 'everyone', share_defaults: { mcp: 'yes' } },
      });
      expect(patched.status).toBe(400);
      expect(patched.body.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
        'share_defaults.mcp',
        'share_policy',
      ]);
      const member = await stack.api('PATCH', `/v1/teams/${team.id}/members/${owner.id}`, {
        key: owner.key,
        body: { role: 'root' },
      });
      expect(member).toMatchObject({ status: 400, body: { param: 'role' } });
      const empty = await stack.api('PATCH', `/v1/teams/${team.id}/members/${owner.id}`, { key: owner.key, body: {} });
      expect(empty.status).toBe(400);
      const page = await stack.api('GET', `/v1/teams/${team.id}/members?limit=0&after_id=a&before_id=b`, {
        key: owner.key,
      });
      expect(page.status).toBe(400);
      expect(page.body.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(['before_id', 'limit']);
    });
  });

  describe('roles', () => {
    it(
      'an admin changes members up to admin, but not to ' + 'owner, and cannot touch an owner or another admin',
      async () => {
        const { team, owner, admin, editor, member } = await fx.teamWithRoles();
        const promoted = await stack.api('PATCH', `/v1/teams/${team.id}/members/${member.id}`, {
          key: admin.key,
          body: { role: 'admin', groups: ['ops'] },
        });
        expect(promoted.status).toBe(200);
        expect(promoted.body).toMatchObject({
          object: 'team_member',
          user_id: member.id,
          role: 'admin',
          groups: ['ops'],
        });
        const toOwner = await stack.api('PATCH', `/v1/teams/${team.id}/members/${editor.id}`, {
          key: admin.key,
          body: { role: 'owner' },
        });
        expect(toOwner.status).toBe(403);
        expect(toOwner.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['teams:write'] });
        const demoteOwner = await stack.api('PATCH', `/v1/teams/${team.id}/members/${owner.id}`, {
          key: admin.key,
          body: { role: 'member' },
        });
        expect(demoteOwner.status).toBe(403);
        expect(demoteOwner.body.message).toMatch(/owner/);
        const demoteAdmin = await stack.api('PATCH', `/v1/teams/${team.id}/members/${member.id}`, {
          key: admin.key,
          body: { role: 'member' },
        });
        expect(demoteAdmin.status).toBe(403);
        expect(await role(team.id, owner.key)).toBe('owner');
      },
    );

    it('editors and members read but change no one; anyone may step down', async () => {
      const { team, admin, editor, member } = await fx.teamWithRoles();
      expect((await stack.api('GET', `/v1/teams/${team.id}/members`, { key: member.key })).body.data).toHaveLength(4);
      const byEditor = await stack.api('PATCH', `/v1/teams/${team.id}/members/${member.id}`, {
        key: editor.key,
        body: { role: 'editor' },
      });
      expect(byEditor.status).toBe(403);
      const selfPromote = await stack.api('PATCH', `/v1/teams/${team.id}/members/${member.id}`, {
        key: member.key,
        body: { role: 'admin' },
      });
      expect(selfPromote.status).toBe(403);
      const stepDown = await stack.api('PATCH', `/v1/teams/${team.id}/members/${admin.id}`, {
        key: admin.key,
        body: { role: 'editor' },
      });
      expect(stepDown.body.role).toBe('editor');
    });

    it('owners remove anyone, admins remove editors and members but not admins, anyone may leave', async () => {
      const { team, owner, admin, editor, member } = await fx.teamWithRoles();
      const second = await fx.user();
      await fx.join(team.id, owner, second, 'admin');
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${second.id}`, { key: admin.key })).status).toBe(
        403,
      );
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${editor.id}`, { key: member.key })).status).toBe(
        403,
      );
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${editor.id}`, { key: admin.key })).status).toBe(
        204,
      );
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${second.id}`, { key: owner.key })).status).toBe(
        204,
      );
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${member.id}`, { key: member.key })).status).toBe(
        204,
      );
      expect((await stack.api('GET', `/v1/teams/${team.id}`, { key: member.key })).status).toBe(404);
      const gone = await stack.api('DELETE', `/v1/teams/${team.id}/members/${member.id}`, { key: owner.key });
      expect(gone).toMatchObject({ status: 404, body: { param: 'user_id' } });
      expect((await stack.api('GET', `/v1/teams/${team.id}`, { key: owner.key })).body.member_count).toBe(2);
    });

    it('removing a member revokes their team keys at once', async () => {
      const { team, owner, member } = await fx.teamWithRoles();
      const teamKey = await stack.seedKey({ userId: member.id, orgId: team.id, scopes: ['teams:read'] });
      const ownKey = await stack.seedKey({ userId: member.id, scopes: ['teams:read'] });
      expect((await stack.api('GET', `/v1/teams/${team.id}`, { key: teamKey.secret })).status).toBe(200);
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${member.id}`, { key: owner.key })).status).toBe(
        204,
      );
      expect((await stack.api('GET', '/v1/teams', { key: teamKey.secret })).status).toBe(403);
      expect((await stack.api('GET', '/v1/teams', { key: ownKey.secret })).status).toBe(200);
    });

    it('the last owner cannot leave or be demoted (409) until another owner exists', async () => {
      const { team, owner, admin } = await fx.teamWithRoles();
      const leave = await stack.api('DELETE', `/v1/teams/${team.id}/members/${owner.id}`, { key: owner.key });
      expect(leave.status).toBe(409);
      expect(leave.body).toMatchObject({ error: 'conflict' });
      const demote = await stack.api('PATCH', `/v1/teams/${team.id}/members/${owner.id}`, {
        key: owner.key,
        body: { role: 'admin' },
      });
      expect(demote.status).toBe(409);

      const promoted = await stack.api('PATCH', `/v1/teams/${team.id}/members/${admin.id}`, {
        key: owner.key,
        body: { role: 'owner' },
      });
      expect(promoted.body.role).toBe('owner');
      expect(
        (
          await stack.api('PATCH', `/v1/teams/${team.id}/members/${owner.id}`, {
            key: owner.key,
            body: { role: 'admin' },
          })
        ).body.role,
      ).toBe('admin');
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${admin.id}`, { key: admin.key })).status).toBe(
        409,
      );
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${owner.id}`, { key: owner.key })).status).toBe(
        204,
      );
      expect(await role(team.id, admin.key)).toBe('owner');
    });

    it('two owners demoting each other at once leave the team with an owner', async () => {
      const { team, owner, admin } = await fx.teamWithRoles();
      await stack.api('PATCH', `/v1/teams/${team.id}/members/${admin.id}`, { key: owner.key, body: { role: 'owner' } });
      const [a, b] = await Promise.all([
        stack.api('DELETE', `/v1/teams/${team.id}/members/${owner.id}`, { key: owner.key }),
        stack.api('DELETE', `/v1/teams/${team.id}/members/${admin.id}`, { key: admin.key }),
      ]);
      expect([a.status, b.status].sort()).toEqual([204, 409]);
    });
  });

  describe('member list', () => {
    it('pages by user id, most recently joined first', async () => {
      const owner = await fx.user();
      const team = await fx.createTeam(owner);
      const joined = [owner.id];
      for (let i = 0; i < 4; i += 1) {
        const who = await fx.user();
        await fx.join(team.id, owner, who);
        joined.push(who.id);
      }
      const newestFirst = [...joined].reverse();
      const first = await stack.api('GET', `/v1/teams/${team.id}/members?limit=2`, { key: owner.key });
      expect(first.body).toMatchObject({ has_more: true, first_id: newestFirst[0], last_id: newestFirst[1] });
      const second = await stack.api('GET', `/v1/teams/${team.id}/members?limit=2&after_id=${first.body.last_id}`, {
        key: owner.key,
      });
      const third = await stack.api('GET', `/v1/teams/${team.id}/members?limit=2&after_id=${second.body.last_id}`, {
        key: owner.key,
      });
      const ids = [first, second, third].flatMap((page) =>
        page.body.data.map((member: { user_id: string }) => member.user_id),
      );
      expect(ids).toEqual(newestFirst);
      expect(third.body.has_more).toBe(false);
      const back = await stack.api('GET', `/v1/teams/${team.id}/members?limit=2&before_id=${third.body.first_id}`, {
        key: owner.key,
      });
      expect(back.body.data.map((member: { user_id: string }) => member.user_id)).toEqual(newestFirst.slice(2, 4));
      const unknown = await stack.api('GET', `/v1/teams/${team.id}/members?after_id=usr_nobody`, { key: owner.key });
      expect(unknown).toMatchObject({ status: 400, body: { param: 'after_id' } });
    });
  });
});

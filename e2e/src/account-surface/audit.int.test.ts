import { createHash } from 'node:crypto';
import { startStack, type AccountSurfaceStack } from '../support/stack';
import { teamFixtures } from '../support/teams.harness';

interface AuditRecord {
  id: string;
  action: string;
  actor: { user_id: string; key_id?: string; session?: string };
  resource: { type: string; id: string };
  ip: string | null;
  at: string;
  changes: { before: Record<string, unknown> | null; after: Record<string, unknown> | null };
}

describe('the audit log (GET /v1/audit)', () => {
  let stack: AccountSurfaceStack;
  let fx: ReturnType<typeof teamFixtures>;
  beforeAll(async () => {
    stack = await startStack({ label: 'audit' });
    fx = teamFixtures(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Every record `reader` may read (following the pages), with an optional query. */
  const records = async (reader: string, query = ''): Promise<AuditRecord[]> => {
    const all: AuditRecord[] = [];
    let after = '';
    for (;;) {
      const page = await stack.api('GET', `/v1/audit?limit=100${query}${after ? `&after_id=${after}` : ''}`, {
        key: reader,
      });
      expect(page.status).toBe(200);
      all.push(...page.body.data);
      if (!page.body.has_more) return all;
      after = page.body.last_id;
    }
  };

  it('records a key revoke with its actor, address and the key before and after, the secret never', async () => {
    const alice = await fx.user();
    const minted = await stack.api('POST', '/v1/keys', { key: alice.key, body: { name: 'ci', preset: 'gateway' } });
    expect(minted.status).toBe(201);
    const session = await stack.seedSession(alice.id);
    const revoked = await stack.api('DELETE', `/v1/keys/${minted.body.id}`, { key: session });
    expect(revoked.status).toBe(200);
    // Revoking it again changes nothing, and records nothing.
    expect((await stack.api('DELETE', `/v1/keys/${minted.body.id}`, { key: alice.key })).status).toBe(200);

    const log = await records(alice.key);
    const revoke = log.find((r) => r.action === 'key.revoke' && r.resource.id === minted.body.id);
    const sessionHandle = `ses_${createHash('sha256').update(session).digest('hex').slice(0, 16)}`;
    expect(revoke).toMatchObject({
      object: 'audit_event',
      actor: { user_id: alice.id, session: sessionHandle },
      resource: { type: 'key', id: minted.body.id },
      changes: {
        before: { id: minted.body.id, name: 'ci', mask: minted.body.mask, revoked_at: null },
        after: { id: minted.body.id, mask: minted.body.mask, revoked_at: revoked.body.revoked_at },
      },
    });
    expect(revoke!.actor.key_id).toBeUndefined();
    expect(log.filter((r) => r.action === 'key.revoke' && r.resource.id === minted.body.id)).toHaveLength(1);
    expect(revoke!.ip).toMatch(/127\.0\.0\.1|::1/);
    const create = log.find((r) => r.action === 'key.create' && r.resource.id === minted.body.id);
    const aliceKeyId = (await stack.api('GET', '/v1/keys/whoami', { key: alice.key })).body.id;
    expect(create).toMatchObject({ actor: { user_id: alice.id, key_id: aliceKeyId }, changes: { before: null } });
    // Newest first.
    expect(log.indexOf(revoke!)).toBeLessThan(log.indexOf(create!));

    // Neither the secret nor its hash is anywhere in the records.
    const text = JSON.stringify(log);
    expect(text).not.toContain(minted.body.key);
    expect(text).not.toContain(createHash('sha256').update(minted.body.key).digest('hex'));
    expect(text).not.toContain('key_hash');
    expect(text).not.toContain(session);
  });

  it('records endpoint, alias and device changes, with endpoint keys and header values masked', async () => {
    const owner = await stack.seedKey();
    const apiKey = 'sk-audit-upstream-secret-0123456789';
    const headerValue = 'audit-header-secret-value';
    const created = await stack.api('POST', '/v1/upstreams', {
      key: owner.secret,
      body: {
        label: 'Audited sim',
        base_url: `${stack.sim.url}/v1`,
        dialect: 'openai',
        api_key: apiKey,
        headers: { 'x-tenant': headerValue },
      },
    });
    expect(created.status).toBe(201);
    const { id: endpointId, slug } = created.body.upstream;
    expect((await stack.api('PATCH', `/v1/upstreams/${slug}`, { key: owner.secret, body: { weight: 0 } })).status).toBe(
      200,
    );
    expect((await stack.api('DELETE', `/v1/upstreams/${slug}`, { key: owner.secret })).status).toBe(204);
    const token = `audit-${Date.now()}`;
    const put = await stack.api('PUT', `/v1/aliases/${token}`, { key: owner.secret, body: { vendor: 'openai' } });
    expect(put.status).toBe(200);
    expect((await stack.api('DELETE', `/v1/aliases/${token}`, { key: owner.secret })).status).toBe(200);

    const session = await stack.seedSession();
    const pairing = await stack.api('POST', '/v1/devices/pair', {
      body: { kind: 'desktop', label: 'Audit laptop', fingerprint: `fp-${token}` },
    });
    const approved = await stack.api('POST', '/v1/devices/pair/approve', {
      key: session,
      body: { user_code: pairing.body.user_code },
    });
    expect(approved.status).toBe(200);
    const paired = await stack.api('POST', '/v1/devices/pair/token', {
      body: { device_code: pairing.body.device_code },
    });
    const deviceId = paired.body.device.id;
    const renamed = await stack.api('PATCH', `/v1/devices/${deviceId}`, {
      key: session,
      body: { label: 'Renamed laptop' },
    });
    expect(renamed.status).toBe(200);
    expect((await stack.api('DELETE', `/v1/devices/${deviceId}`, { key: session })).status).toBe(200);

    const log = await records(owner.secret);
    const about = (id: string) => log.filter((r) => r.resource.id === id).map((r) => r.action);
    expect(about(endpointId)).toEqual(['endpoint.delete', 'endpoint.update', 'endpoint.create']);
    const update = log.find((r) => r.action === 'endpoint.update' && r.resource.id === endpointId)!;
    expect(update).toMatchObject({
      actor: { user_id: stack.ownerId, key_id: owner.id },
      resource: { type: 'endpoint' },
      changes: { before: { weight: 1, has_api_key: true, header_names: ['x-tenant'] }, after: { weight: 0 } },
    });
    expect(about(`@${token}`)).toEqual(['alias.delete', 'alias.create']);
    expect(about(pairing.body.user_code)).toEqual(['device.approve']);
    expect(about(deviceId)).toEqual(['device.unlink', 'device.rename']);
    expect(log.find((r) => r.action === 'device.rename')).toMatchObject({
      actor: { user_id: stack.ownerId, session: expect.stringMatching(/^ses_/) },
      changes: { before: { label: 'Audit laptop' }, after: { label: 'Renamed laptop' } },
    });

    const text = JSON.stringify(log);
    for (const secret of [apiKey, headerValue, session, paired.body.device_token, pairing.body.device_code])
      expect(text).not.toContain(secret);
  });

  it('another account’s records are invisible, whatever the filters', async () => {
    const [alice, mallory] = await Promise.all([fx.user(), fx.user()]);
    const minted = await stack.api('POST', '/v1/keys', { key: alice.key, body: { name: 'private' } });
    await stack.api('DELETE', `/v1/keys/${minted.body.id}`, { key: alice.key });
    expect((await records(alice.key)).map((r) => r.resource.id)).toContain(minted.body.id);

    for (const query of ['', `&actor=${alice.id}`, '&resource_type=key', '&action=key.revoke']) {
      const seen = await records(mallory.key, query);
      expect(seen.filter((r) => r.actor.user_id === alice.id || r.resource.id === minted.body.id)).toEqual([]);
    }
  });

  it('a team’s owners and admins read the team’s records; an editor or a plain member does not', async () => {
    const { team, owner, admin, editor, member } = await fx.teamWithRoles();
    const renamed = await stack.api('PATCH', `/v1/teams/${team.id}`, { key: owner.key, body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    const promoted = await stack.api('PATCH', `/v1/teams/${team.id}/members/${editor.id}`, {
      key: owner.key,
      body: { role: 'member' },
    });
    expect(promoted.status).toBe(200);
    const outsider = await fx.user();
    await fx.invite(team.id, owner, outsider.email);

    for (const reader of [owner, admin]) {
      const log = await records(reader.key);
      const update = log.find((r) => r.action === 'team.update' && r.resource.id === team.id);
      expect(update).toMatchObject({
        actor: { user_id: owner.id },
        resource: { type: 'team', id: team.id },
        changes: { before: { name: 'Core' }, after: { name: 'Renamed' } },
      });
      expect(log.map((r) => r.action)).toEqual(
        expect.arrayContaining(['team.create', 'team_invite.create', 'team_member.join', 'team_member.update']),
      );
    }
    // A plain member reads their own membership's records, and none of the team's own.
    const memberLog = await records(member.key);
    expect(memberLog.filter((r) => r.resource.type === 'team' || r.resource.type === 'team_invite')).toEqual([]);
    expect(memberLog.map((r) => `${r.action} ${r.resource.id}`)).toEqual([`team_member.join ${member.id}`]);
    const editorLog = await records(editor.key);
    expect(editorLog.filter((r) => r.resource.type === 'team')).toEqual([]);
    expect(editorLog.find((r) => r.action === 'team_member.update')).toMatchObject({
      resource: { type: 'team_member', id: editor.id },
      changes: { before: { role: 'editor' }, after: { role: 'member' } },
    });
  });

  it('removing a member records the removal and the revoke of each of their team keys', async () => {
    const { team, owner, admin, member } = await fx.teamWithRoles();
    const teamKey = await stack.api('POST', '/v1/keys', {
      key: member.key,
      body: { name: 'team ci', org_id: team.id },
    });
    expect(teamKey.status).toBe(201);
    const removed = await stack.api('DELETE', `/v1/teams/${team.id}/members/${member.id}`, { key: owner.key });
    expect(removed.status).toBe(204);

    for (const reader of [admin, member]) {
      const log = await records(reader.key);
      expect(log.find((r) => r.action === 'key.revoke' && r.resource.id === teamKey.body.id)).toMatchObject({
        actor: { user_id: owner.id },
        changes: { before: { org_id: team.id, revoked_at: null }, after: { revoked_at: expect.any(String) } },
      });
      expect(log.find((r) => r.action === 'team_member.remove')).toMatchObject({
        resource: { type: 'team_member', id: member.id },
        changes: { before: { role: 'member' }, after: null },
      });
    }
  });

  it('filters by actor, action, resource type and time', async () => {
    const alice = await fx.user();
    const first = await stack.api('POST', '/v1/keys', { key: alice.key, body: { name: 'one' } });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await stack.api('POST', '/v1/keys', { key: alice.key, body: { name: 'two' } });
    await stack.api('DELETE', `/v1/keys/${second.body.id}`, { key: alice.key });
    const team = await fx.createTeam(alice);

    expect((await records(alice.key, '&action=key.revoke')).map((r) => r.resource.id)).toEqual([second.body.id]);
    expect((await records(alice.key, '&resource_type=team')).map((r) => r.resource.id)).toEqual([team.id]);
    const aboutSecond = await records(alice.key, `&resource_id=${second.body.id}`);
    expect(aboutSecond.map((r) => r.action)).toEqual(['key.revoke', 'key.create']);
    expect((await records(alice.key, `&actor=${alice.id}`)).length).toBe(4);
    expect((await records(alice.key, `&actor=usr_nobody`)).length).toBe(0);
    const before = await records(alice.key, `&to=${encodeURIComponent(between)}`);
    expect(before.map((r) => r.resource.id)).toEqual([first.body.id]);
    const since = await records(alice.key, `&from=${encodeURIComponent(between)}&resource_type=key`);
    expect(since.map((r) => r.action)).toEqual(['key.revoke', 'key.create']);

    const page = await stack.api('GET', '/v1/audit?limit=1', { key: alice.key });
    expect(page.body).toMatchObject({ object: 'list', has_more: true, first_id: page.body.data[0].id });
    const next = await stack.api('GET', `/v1/audit?limit=1&after_id=${page.body.last_id}`, { key: alice.key });
    expect(next.body.data[0].id < page.body.last_id).toBe(true);
  });

  it('refuses bad filters with a 400 naming the parameter', async () => {
    const alice = await fx.user();
    for (const [query, param] of [
      ['resource_type=wallet', 'resource_type'],
      ['action=revoke', 'action'],
      ['from=yesterday', 'from'],
      ['to=0000-01-01T00:00:00Z', 'to'],
      ['from=9999-12-31T00:00:00Z', 'from'],
      ['from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      ['limit=0', 'limit'],
      ['after_id=aud_1&before_id=aud_2', 'before_id'],
    ]) {
      const answer = await stack.api('GET', `/v1/audit?${query}`, { key: alice.key });
      expect({ query, status: answer.status, error: answer.body.error, param: answer.body.param }).toEqual({
        query,
        status: 400,
        error: 'invalid_request',
        param,
      });
    }
  });

  it('needs a credential, and audit:read on a key', async () => {
    expect((await stack.api('GET', '/v1/audit')).status).toBe(401);
    const userId = await stack.seedUser();
    const { secret } = await stack.seedKey({ userId, scopes: ['keys:read', 'keys:write'] });
    const refused = await stack.api('GET', '/v1/audit', { key: secret });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['audit:read'] });
  });

  it('records are append-only: the database refuses to change or delete one', async () => {
    const alice = await fx.user();
    await stack.api('POST', '/v1/keys', { key: alice.key, body: { name: 'kept' } });
    const prisma = stack.account.database.prisma;
    await expect(prisma.$executeRaw`UPDATE audit_events SET action = 'key.nothing'`).rejects.toThrow(/append-only/);
    await expect(prisma.$executeRaw`DELETE FROM audit_events`).rejects.toThrow(/append-only/);
    expect((await records(alice.key)).map((r) => r.action)).toEqual(['key.create']);
  });
});

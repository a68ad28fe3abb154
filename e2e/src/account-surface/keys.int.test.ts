import { hashSecret, newId, newSecret } from '@sbc/ids';
import { LEGACY_SCOPES, PRESETS, SCOPES } from '@sbc/scopes';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

describe('caller keys (GET/POST /v1/keys, GET /v1/keys/whoami, PATCH/DELETE /v1/keys/{id})', () => {
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    stack = await startStack({ label: 'keys' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const mint = (body: Record<string, unknown>, key = OWNER_KEY) => stack.api('POST', '/v1/keys', { key, body });
  const whoami = (key?: string) => stack.api('GET', '/v1/keys/whoami', { key });
  const lacking = (scope: string) => stack.seedKey({ scopes: SCOPES.filter((held) => held !== scope) });

  /** A key with keys:write limited every way a key can be: the bound for the "never wider" cases. */
  async function limitedMinter(): Promise<string> {
    const answer = await mint({
      name: 'limited minter',
      scopes: ['gateway:invoke', 'keys:read', 'keys:write'],
      allowed_models: ['gpt-*'],
      daily_limit_tokens: 100,
      monthly_limit_tokens: 1000,
      route: 'credits',
    });
    expect(answer.status).toBe(201);
    return answer.body.key;
  }

  describe('POST /v1/keys', () => {
    it('mints a key whose secret works and is shown only once; the list shows only the mask', async () => {
      const minted = await mint({
        name: 'my cli',
        preset: 'gateway',
        allowed_models: ['gpt-*'],
        daily_limit_tokens: 100,
        route: 'credits',
        mode: 'agent',
        incognito: true,
      });
      expect(minted.status).toBe(201);
      expect(minted.body).toMatchObject({
        id: expect.stringMatching(/^key_/),
        user_id: stack.ownerId,
        name: 'my cli',
        key: expect.stringMatching(/^sbc_/),
        scopes: ['gateway:invoke'],
        allowed_models: ['gpt-*'],
        daily_limit_tokens: 100,
        caps_unit: 'credit',
        route: 'credits',
        mode: 'agent',
        incognito: true,
      });
      const secret: string = minted.body.key;
      expect(minted.body.mask).toBe(`${secret.slice(0, 8)}…${secret.slice(-4)}`);

      const me = await whoami(secret);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ id: minted.body.id, mask: minted.body.mask });
      expect(me.body.key).toBeUndefined();

      const list = await stack.api('GET', '/v1/keys?limit=100', { key: OWNER_KEY });
      const listed = list.body.data.find((key: { id: string }) => key.id === minted.body.id);
      expect(listed).toMatchObject({ mask: minted.body.mask });
      expect(listed.key).toBeUndefined();
      expect(JSON.stringify(list.body)).not.toContain(secret);
    });

    it(
      'gives the Gateway preset when neither scopes nor ' + 'preset is sent, and defaults route, mode and incognito',
      async () => {
        const minted = await mint({ name: 'defaults' });
        expect(minted.status).toBe(201);
        expect(minted.body).toMatchObject({
          scopes: [...PRESETS.gateway],
          route: 'auto',
          mode: 'model',
          incognito: false,
        });
        expect(minted.body.allowed_models).toBeUndefined();
        expect(minted.body.daily_limit_tokens).toBeUndefined();
      },
    );

    it('refuses an invalid body with every issue listed and the first named in param', async () => {
      const answer = await mint({
        name: '',
        scopes: ['keys:nope'],
        daily_limit_tokens: 1.5,
        route: 'somewhere',
        colour: 'red',
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_request', param: expect.any(String) });
      const paths = answer.body.issues.map((issue: { path: string }) => issue.path);
      expect(paths).toEqual(expect.arrayContaining(['name', 'scopes.0', 'daily_limit_tokens', 'route']));
      expect(answer.body.issues.some((issue: { message: string }) => issue.message.includes('colour'))).toBe(true);
      expect(answer.body.param).toBe(paths[0]);
    });

    it('refuses scopes and a preset together', async () => {
      const answer = await mint({ name: 'both', scopes: ['gateway:invoke'], preset: 'full_access' });
      expect(answer).toMatchObject({ status: 400, body: { param: 'preset' } });
    });

    it('is 401 without a credential and 403 with required_scopes for a key lacking keys:write', async () => {
      expect((await stack.api('POST', '/v1/keys', { body: { name: 'x' } })).status).toBe(401);
      const answer = await mint({ name: 'x' }, (await lacking('keys:write')).secret);
      expect(answer).toMatchObject({
        status: 403,
        body: { error: 'insufficient_scope', required_scopes: ['keys:write'] },
      });
    });

    it.each([
      ['a scope it lacks', { scopes: ['gateway:invoke', 'usage:read'] }, 'scopes'],
      ['every model', { allowed_models: undefined }, 'allowed_models'],
      ['models outside its own', { allowed_models: ['claude-*'] }, 'allowed_models'],
      ['no daily cap', { daily_limit_tokens: undefined }, 'daily_limit_tokens'],
      ['a higher daily cap', { daily_limit_tokens: 101 }, 'daily_limit_tokens'],
      ['a higher monthly cap', { monthly_limit_tokens: 1001 }, 'monthly_limit_tokens'],
      ['another route', { route: 'auto' }, 'route'],
    ])('never mints a key wider than the caller: %s is 403', async (_label, change, param) => {
      const minter = await limitedMinter();
      const within = {
        name: 'narrower',
        scopes: ['gateway:invoke'],
        allowed_models: ['gpt-4o', 'gpt-4*'],
        daily_limit_tokens: 100,
        monthly_limit_tokens: 1000,
        route: 'credits',
      };
      expect((await mint(within, minter)).status).toBe(201);
      const answer = await mint({ ...within, ...change }, minter);
      expect(answer).toMatchObject({ status: 403, body: { error: 'insufficient_scope', param } });
    });

    it.each([
      ['no rpm limit', { rpm: undefined }, { rpm: null }, 'rpm'],
      ['a higher rpm', { rpm: 61 }, { rpm: 61 }, 'rpm'],
      ['no tpm limit', { tpm: undefined }, { tpm: null }, 'tpm'],
      ['a higher tpm', { tpm: 10_001 }, { tpm: 10_001 }, 'tpm'],
    ])('a rate-limited key never mints or edits a key limited less: %s is 403', async (_label, change, edit, param) => {
      const minted = await mint({
        name: 'rate-limited minter',
        scopes: ['gateway:invoke', 'keys:read', 'keys:write'],
        rpm: 60,
        tpm: 10_000,
      });
      expect(minted.status).toBe(201);
      const minter: string = minted.body.key;
      const within = { name: 'narrower', scopes: ['gateway:invoke'], rpm: 60, tpm: 10_000 };
      const own = await mint(within, minter);
      expect(own.status).toBe(201);
      const refused = { status: 403, body: { error: 'insufficient_scope', param } };
      expect(await mint({ ...within, ...change }, minter)).toMatchObject(refused);
      expect(await stack.api('PATCH', `/v1/keys/${own.body.id}`, { key: minter, body: edit })).toMatchObject(refused);
    });

    it('a signed-in session mints any key', async () => {
      const session = await stack.seedSession();
      const minted = await mint({ name: 'from a session', preset: 'full_access' }, session);
      expect(minted).toMatchObject({ status: 201, body: { scopes: [...SCOPES] } });
    });

    it('mints a team key only for a team the user belongs to, its scopes capped', async () => {
      const prisma = stack.account.database.prisma;
      const stranger = await stack.seedUser();
      const teamId = newId('org');
      await prisma.team.create({
        data: {
          id: teamId,
          name: 'crew',
          createdBy: stranger,
          members: { create: { userId: stranger, role: 'owner' } },
        },
      });
      expect(await mint({ name: 'team', org_id: teamId })).toMatchObject({
        status: 404,
        body: { error: 'not_found', param: 'org_id' },
      });

      await prisma.teamMember.create({ data: { teamId, userId: stack.ownerId, role: 'member' } });
      const minted = await mint({ name: 'team', org_id: teamId, preset: 'full_access' });
      expect(minted).toMatchObject({ status: 201, body: { org_id: teamId } });
      for (const excluded of ['keys:write', 'teams:write', 'devices:write', 'builds:admin'])
        expect(minted.body.scopes).not.toContain(excluded);
      expect(minted.body.scopes).toContain('gateway:invoke');
    });

    it('binds a key to a device of this account only', async () => {
      expect(await mint({ name: 'device', device_id: 'dev_01NOTPAIRED' })).toMatchObject({
        status: 404,
        body: { param: 'device_id' },
      });
      const deviceId = newId('dev');
      await stack.account.database.prisma.device.create({
        data: {
          id: deviceId,
          userId: stack.ownerId,
          kind: 'cli',
          label: 'laptop',
          fingerprint: 'fp',
          tokenHash: new Uint8Array(hashSecret(newSecret('sbd'))),
        },
      });
      expect(await mint({ name: 'device', device_id: deviceId })).toMatchObject({
        status: 201,
        body: { device_id: deviceId },
      });
    });
  });

  describe('GET /v1/keys', () => {
    it("lists only this account's keys, newest first, paging with limit, after_id and before_id", async () => {
      const userId = await stack.seedUser();
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push(await stack.seedKey({ userId, scopes: ['keys:read'] }));
      const [oldest, middle, newest] = keys.map((key) => key.id);
      const reader = keys[0]!.secret;

      const first = await stack.api('GET', '/v1/keys?limit=2', { key: reader });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ object: 'list', has_more: true, first_id: newest, last_id: middle });
      expect(first.body.data.map((key: { id: string }) => key.id)).toEqual([newest, middle]);

      const next = await stack.api('GET', `/v1/keys?limit=2&after_id=${first.body.last_id}`, { key: reader });
      expect(next.body).toMatchObject({ has_more: false, first_id: oldest, last_id: oldest });

      const previous = await stack.api('GET', `/v1/keys?limit=2&before_id=${oldest}`, { key: reader });
      expect(previous.body.data.map((key: { id: string }) => key.id)).toEqual([newest, middle]);
    });

    it('refuses a bad limit and both cursors at once with 400 naming the parameter', async () => {
      expect(await stack.api('GET', '/v1/keys?limit=0', { key: OWNER_KEY })).toMatchObject({
        status: 400,
        body: { param: 'limit' },
      });
      expect(await stack.api('GET', '/v1/keys?after_id=key_a&before_id=key_b', { key: OWNER_KEY })).toMatchObject({
        status: 400,
        body: { param: 'before_id' },
      });
    });

    it('is 401 without a credential and 403 for a key lacking keys:read', async () => {
      expect((await stack.api('GET', '/v1/keys')).status).toBe(401);
      const answer = await stack.api('GET', '/v1/keys', { key: (await lacking('keys:read')).secret });
      expect(answer).toMatchObject({
        status: 403,
        body: { error: 'insufficient_scope', required_scopes: ['keys:read'] },
      });
    });
  });

  describe('GET /v1/keys/whoami', () => {
    it('a key without a stored scope list shows the legacy set', async () => {
      const legacy = await stack.seedKey({ scopes: null });
      expect(await whoami(legacy.secret)).toMatchObject({
        status: 200,
        body: { id: legacy.id, scopes: [...LEGACY_SCOPES] },
      });
    });

    it('a team key shows its capped scopes', async () => {
      const team = await stack.seedKey({ orgId: newId('org') });
      const answer = await whoami(team.secret);
      expect(answer.body.scopes).toEqual(
        SCOPES.filter((scope) => !['keys:write', 'teams:write', 'devices:write', 'builds:admin'].includes(scope)),
      );
    });

    it('is 401 without a credential, and 400 for a session, which is not a key', async () => {
      expect((await whoami()).status).toBe(401);
      expect(await whoami(await stack.seedSession())).toMatchObject({
        status: 400,
        body: { error: 'invalid_request' },
      });
    });
  });

  describe('PATCH /v1/keys/{id}', () => {
    it("takes effect on the key's next call: a removed scope is refused at once", async () => {
      const minted = await mint({ name: 'shrinking', scopes: ['keys:read', 'gateway:invoke'] });
      const key: string = minted.body.key;
      expect((await stack.api('GET', '/v1/keys', { key })).status).toBe(200);
      const changed = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, {
        key: OWNER_KEY,
        body: { scopes: ['gateway:invoke'] },
      });
      expect(changed).toMatchObject({ status: 200, body: { scopes: ['gateway:invoke'] } });
      expect((await stack.api('GET', '/v1/keys', { key })).status).toBe(403);
    });

    it('changes only the fields sent; null clears caps and allowed models', async () => {
      const minted = await mint({
        name: 'capped',
        allowed_models: ['gpt-*'],
        daily_limit_tokens: 5,
        monthly_limit_tokens: 50,
        mode: 'agent',
      });
      const changed = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, {
        key: OWNER_KEY,
        body: { name: 'renamed', allowed_models: null, daily_limit_tokens: null, preset: 'read_only' },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({
        name: 'renamed',
        monthly_limit_tokens: 50,
        mode: 'agent',
        scopes: [...PRESETS.read_only],
      });
      expect(changed.body.allowed_models).toBeUndefined();
      expect(changed.body.daily_limit_tokens).toBeUndefined();
    });

    it('refuses an invalid body or id with 400', async () => {
      const minted = await mint({ name: 'target' });
      const bad = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, {
        key: OWNER_KEY,
        body: { name: 'x'.repeat(65), org_id: 'org_x' },
      });
      expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_request', param: 'name' } });
      expect(bad.body.issues).toHaveLength(2);
      expect(await stack.api('PATCH', `/v1/keys/key_${'x'.repeat(70)}`, { key: OWNER_KEY, body: {} })).toMatchObject({
        status: 400,
        body: { param: 'id' },
      });
    });

    it("is 401 without a credential, 403 for a key lacking keys:write, 404 for another account's key", async () => {
      const minted = await mint({ name: 'target' });
      expect((await stack.api('PATCH', `/v1/keys/${minted.body.id}`, { body: {} })).status).toBe(401);
      const refused = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, {
        key: (await lacking('keys:write')).secret,
        body: {},
      });
      expect(refused).toMatchObject({ status: 403, body: { required_scopes: ['keys:write'] } });
      const other = await stack.seedKey({ userId: await stack.seedUser() });
      expect(
        await stack.api('PATCH', `/v1/keys/${other.id}`, { key: OWNER_KEY, body: { name: 'mine now' } }),
      ).toMatchObject({ status: 404, body: { error: 'not_found' } });
    });

    it('never edits a key to be, or to stay, wider than the caller', async () => {
      const minter = await limitedMinter();
      const own = await mint(
        {
          name: 'own',
          scopes: ['gateway:invoke'],
          allowed_models: ['gpt-4o'],
          daily_limit_tokens: 10,
          monthly_limit_tokens: 10,
          route: 'credits',
        },
        minter,
      );
      expect(
        await stack.api('PATCH', `/v1/keys/${own.body.id}`, { key: minter, body: { daily_limit_tokens: null } }),
      ).toMatchObject({ status: 403, body: { param: 'daily_limit_tokens' } });
      expect(
        await stack.api('PATCH', `/v1/keys/${own.body.id}`, { key: minter, body: { scopes: ['usage:read'] } }),
      ).toMatchObject({ status: 403, body: { param: 'scopes' } });
      expect(
        (await stack.api('PATCH', `/v1/keys/${own.body.id}`, { key: minter, body: { name: 'fine' } })).status,
      ).toBe(200);
      const wide = await mint({ name: 'wide', preset: 'full_access' });
      expect(
        (await stack.api('PATCH', `/v1/keys/${wide.body.id}`, { key: minter, body: { name: 'narrow?' } })).status,
      ).toBe(403);
    });

    it('a revoked key cannot be changed: 409', async () => {
      const minted = await mint({ name: 'gone' });
      expect((await stack.api('DELETE', `/v1/keys/${minted.body.id}`, { key: OWNER_KEY })).status).toBe(200);
      expect(
        await stack.api('PATCH', `/v1/keys/${minted.body.id}`, { key: OWNER_KEY, body: { name: 'back' } }),
      ).toMatchObject({ status: 409, body: { error: 'conflict' } });
    });
  });

  describe('DELETE /v1/keys/{id}', () => {
    it('a revoked key is refused with 403 on its next call while other keys keep working', async () => {
      const [doomed, survivor] = [await mint({ name: 'doomed' }), await mint({ name: 'survivor' })];
      expect((await whoami(doomed.body.key)).status).toBe(200);
      const revoked = await stack.api('DELETE', `/v1/keys/${doomed.body.id}`, { key: OWNER_KEY });
      expect(revoked).toMatchObject({ status: 200, body: { id: doomed.body.id, revoked_at: expect.any(String) } });
      expect((await whoami(doomed.body.key)).status).toBe(403);
      expect((await whoami(survivor.body.key)).status).toBe(200);
      expect((await whoami(OWNER_KEY)).status).toBe(200);
    });

    it(
      'is 400 for an over-long id, 401 without a credential, ' +
        "403 lacking keys:write, 404 for another account's key",
      async () => {
        const minted = await mint({ name: 'kept' });
        expect(await stack.api('DELETE', `/v1/keys/key_${'x'.repeat(70)}`, { key: OWNER_KEY })).toMatchObject({
          status: 400,
          body: { param: 'id' },
        });
        expect((await stack.api('DELETE', `/v1/keys/${minted.body.id}`)).status).toBe(401);
        const refused = await stack.api('DELETE', `/v1/keys/${minted.body.id}`, {
          key: (await lacking('keys:write')).secret,
        });
        expect(refused).toMatchObject({ status: 403, body: { required_scopes: ['keys:write'] } });
        const other = await stack.seedKey({ userId: await stack.seedUser() });
        expect((await stack.api('DELETE', `/v1/keys/${other.id}`, { key: OWNER_KEY })).status).toBe(404);
        expect((await whoami(other.secret)).status).toBe(200);
      },
    );
  });

  describe('never narrower over wider', () => {
    it(
      'a keys:write-only key cannot revoke or edit a Full access key (403 naming what it lacks); the wide key keeps ' +
        'working',
      async () => {
        const wide = await mint({ name: 'wide', preset: 'full_access' });
        const narrow = (await mint({ name: 'narrow', scopes: ['keys:write'] })).body.key;
        const revoked = await stack.api('DELETE', `/v1/keys/${wide.body.id}`, { key: narrow });
        expect(revoked).toMatchObject({ status: 403, body: { error: 'insufficient_scope', param: 'id' } });
        expect(revoked.body.required_scopes).toEqual(
          expect.arrayContaining(['gateway:invoke', 'keys:read', 'builds:admin']),
        );
        expect(revoked.body.required_scopes).not.toContain('keys:write');
        const edited = await stack.api('PATCH', `/v1/keys/${wide.body.id}`, {
          key: narrow,
          body: { name: 'renamed by a narrower key' },
        });
        expect(edited).toMatchObject({ status: 403, body: { error: 'insufficient_scope', param: 'id' } });
        const still = await whoami(wide.body.key);
        expect(still).toMatchObject({ status: 200, body: { name: 'wide' } });
        expect(still.body.revoked_at).toBeUndefined();
      },
    );

    it('a key may revoke or edit a key no wider than itself, and a session any key of the account', async () => {
      const minter = (await mint({ name: 'minter', scopes: ['gateway:invoke', 'keys:write'] })).body.key;
      const same = await mint({ name: 'same', scopes: ['gateway:invoke', 'keys:write'] });
      expect(
        (await stack.api('PATCH', `/v1/keys/${same.body.id}`, { key: minter, body: { name: 'same, renamed' } })).status,
      ).toBe(200);
      expect((await stack.api('DELETE', `/v1/keys/${same.body.id}`, { key: minter })).status).toBe(200);
      const wide = await mint({ name: 'wide for a session', preset: 'full_access' });
      expect((await stack.api('DELETE', `/v1/keys/${wide.body.id}`, { key: await stack.seedSession() })).status).toBe(
        200,
      );
    });

    it("a non-operator's key that stores builds:admin acts without it and can still be edited by itself", async () => {
      const stored = await stack.seedKey({ userId: await stack.seedUser(), scopes: [...SCOPES] });
      const withoutAdmin = SCOPES.filter((scope) => scope !== 'builds:admin');
      expect((await whoami(stored.secret)).body.scopes).toEqual(withoutAdmin);
      const renamed = await stack.api('PATCH', `/v1/keys/${stored.id}`, {
        key: stored.secret,
        body: { name: 'renamed' },
      });
      expect(renamed).toMatchObject({ status: 200, body: { name: 'renamed', scopes: withoutAdmin } });
    });
  });
});

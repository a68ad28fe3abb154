import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '@sbc/testing';
import { EVERYTHING_SERVER, startEverythingServer, type RunningMcpServer } from '../support/mcp-everything';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';
import { teamFixtures, type TeamUser } from '../support/teams.harness';

const BEARER = 'mcp-bearer-secret-0123456789';
const HEADER_VALUE = 'mcp-header-secret-9876';
// For servers of users who are not operators, which may not aim at loopback: saved, and their probe fails.
const UNRESOLVABLE = 'http://tools.invalid/mcp';

/** An HTTP server that refuses every request with 401 and keeps the headers it was sent. */
async function refusingServer(): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(401, { 'content-type': 'text/plain' });
    res.end('go away: secret-body-text');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen, server };
}

const describeWithServer = EVERYTHING_SERVER.unavailable ? describe.skip : describe;
if (EVERYTHING_SERVER.unavailable) console.warn(`MCP tool server suite skipped: ${EVERYTHING_SERVER.unavailable}`);

describeWithServer('MCP tool servers: /v1/mcp/servers', () => {
  let stack: AccountSurfaceStack;
  let everything: RunningMcpServer;
  let closedUrl: string;
  beforeAll(async () => {
    [stack, everything] = await Promise.all([startStack({ label: 'mcp_servers' }), startEverythingServer()]);
    closedUrl = `http://127.0.0.1:${await freePort()}/mcp`;
  }, 240_000);
  afterAll(async () => {
    await everything?.stop();
    await stack?.stop();
  });

  const create = (body: Record<string, unknown>, key = OWNER_KEY) =>
    stack.api('POST', '/v1/mcp/servers', { key, body });

  describe('saving probes the server', () => {
    it('a Streamable HTTP MCP server is probed on create: initialize, tools/list, and the tools it lists', async () => {
      const answer = await create({ label: 'Everything', url: everything.url });
      expect(answer.status).toBe(201);
      expect(answer.body.probe).toMatchObject({
        ok: true,
        tools_found: expect.any(Number),
        server_name: expect.any(String),
        protocol_version: expect.any(String),
      });
      const { server } = answer.body;
      expect(server).toMatchObject({
        object: 'mcp_server',
        slug: 'everything',
        label: 'Everything',
        url: everything.url,
        has_bearer_token: false,
        updated_at: expect.any(String),
      });
      expect(server.tools.length).toBe(answer.body.probe.tools_found);
      expect(server.tools).toContainEqual({ name: 'echo', description: expect.any(String) });
      expect(server.probe).toEqual(answer.body.probe);
    });

    it('a server that is down is still saved, with probe.ok false and the reason', async () => {
      const answer = await create({ label: 'Down', url: closedUrl });
      expect(answer.status).toBe(201);
      expect(answer.body.probe).toMatchObject({
        ok: false,
        error: expect.stringMatching(/connection refused by 127\.0\.0\.1:\d+/),
      });
      expect(answer.body.server).toMatchObject({ slug: 'down', tools: [] });
      const probed = await stack.api('POST', '/v1/mcp/servers/down/probe', { key: OWNER_KEY });
      expect(probed.status).toBe(200);
      expect(probed.body.probe).toMatchObject({ ok: false });
    });

    it('headers and the bearer token reach the server, never come back; a refusal shows its status only', async () => {
      const refusing = await refusingServer();
      try {
        const answer = await create({
          label: 'Guarded',
          url: refusing.url,
          headers: { 'x-tenant': HEADER_VALUE, authorization: 'Bearer overridden' },
          bearer_token: BEARER,
        });
        expect(answer.status).toBe(201);
        expect(answer.body.probe).toMatchObject({ ok: false, error: expect.stringContaining('HTTP 401') });
        expect(answer.body.server).toMatchObject({
          has_bearer_token: true,
          headers: { 'x-tenant': '••••', authorization: '••••' },
        });
        expect(refusing.seen[0]).toMatchObject({ authorization: `Bearer ${BEARER}`, 'x-tenant': HEADER_VALUE });
        const reads = [
          answer,
          await stack.api('GET', '/v1/mcp/servers/guarded', { key: OWNER_KEY }),
          await stack.api('GET', '/v1/mcp/servers?limit=100', { key: OWNER_KEY }),
          await stack.api('GET', '/v1/audit?resource_type=mcp_server&limit=100', { key: OWNER_KEY }),
        ];
        for (const read of reads) {
          const text = JSON.stringify(read.body);
          expect(text).not.toContain(BEARER);
          expect(text).not.toContain(HEADER_VALUE);
          expect(text).not.toContain('secret-body-text');
        }
      } finally {
        refusing.server.close();
      }
    });
  });

  describe('editing', () => {
    it('changing only the label does not re-probe; changing the url does', async () => {
      const created = await create({ label: 'Movable', url: closedUrl });
      const relabelled = await stack.api('PATCH', '/v1/mcp/servers/movable', {
        key: OWNER_KEY,
        body: { label: 'Moved' },
      });
      expect(relabelled.status).toBe(200);
      expect(relabelled.body.server).toMatchObject({ slug: 'movable', label: 'Moved' });
      expect(relabelled.body.probe.at).toBe(created.body.probe.at);
      const moved = await stack.api('PATCH', '/v1/mcp/servers/movable', {
        key: OWNER_KEY,
        body: { url: everything.url },
      });
      expect(moved.status).toBe(200);
      expect(moved.body.probe).toMatchObject({ ok: true });
      expect(moved.body.server.tools).toContainEqual(expect.objectContaining({ name: 'echo' }));
    });

    it('a deleted server is gone: 204, then 404 on every route', async () => {
      await create({ label: 'Doomed', url: closedUrl });
      expect((await stack.api('DELETE', '/v1/mcp/servers/doomed', { key: OWNER_KEY })).status).toBe(204);
      for (const [method, path] of [
        ['GET', '/v1/mcp/servers/doomed'],
        ['PATCH', '/v1/mcp/servers/doomed'],
        ['DELETE', '/v1/mcp/servers/doomed'],
        ['POST', '/v1/mcp/servers/doomed/probe'],
      ] as const) {
        const answer = await stack.api(method, path, { key: OWNER_KEY, body: method === 'PATCH' ? {} : undefined });
        expect({ method, status: answer.status, error: answer.body.error }).toEqual({
          method,
          status: 404,
          error: 'not_found',
        });
      }
    });

    it('every change is an audit record', async () => {
      await create({ label: 'Audited', url: closedUrl });
      await stack.api('PATCH', '/v1/mcp/servers/audited', { key: OWNER_KEY, body: { label: 'Audited 2' } });
      await stack.api('DELETE', '/v1/mcp/servers/audited', { key: OWNER_KEY });
      const audit = await stack.api('GET', '/v1/audit?resource_type=mcp_server&limit=100', { key: OWNER_KEY });
      expect(audit.status).toBe(200);
      const actions = audit.body.data
        .filter((event: { changes: { before?: { slug?: string }; after?: { slug?: string } } }) =>
          [event.changes.before?.slug, event.changes.after?.slug].includes('audited'),
        )
        .map((event: { action: string }) => event.action);
      expect(actions).toEqual(['mcp_server.delete', 'mcp_server.update', 'mcp_server.create']);
    });
  });

  describe('lists', () => {
    it('pages newest first in the list envelope', async () => {
      const user = await stack.seedUser();
      const { secret } = await stack.seedKey({ userId: user });
      for (const label of ['One', 'Two', 'Three'])
        expect((await create({ label, url: UNRESOLVABLE }, secret)).status).toBe(201);
      const first = await stack.api('GET', '/v1/mcp/servers?limit=2', { key: secret });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ object: 'list', has_more: true });
      expect(first.body.data.map((server: { slug: string }) => server.slug)).toEqual(['three', 'two']);
      expect(first.body.first_id).toBe(first.body.data[0].id);
      const next = await stack.api('GET', `/v1/mcp/servers?limit=2&after_id=${first.body.last_id}`, { key: secret });
      expect(next.body).toMatchObject({ has_more: false });
      expect(next.body.data.map((server: { slug: string }) => server.slug)).toEqual(['one']);
    });
  });

  describe('who may', () => {
    it("another account's slug is 404, never its server", async () => {
      const user = await stack.seedUser();
      const { secret } = await stack.seedKey({ userId: user });
      for (const [method, path] of [
        ['GET', '/v1/mcp/servers/everything'],
        ['PATCH', '/v1/mcp/servers/everything'],
        ['DELETE', '/v1/mcp/servers/everything'],
        ['POST', '/v1/mcp/servers/everything/probe'],
      ] as const) {
        const answer = await stack.api(method, path, {
          key: secret,
          body: method === 'PATCH' ? { label: 'x' } : undefined,
        });
        expect({ method, status: answer.status }).toEqual({ method, status: 404 });
      }
      const list = await stack.api('GET', '/v1/mcp/servers', { key: secret });
      expect(list.body.data).toEqual([]);
      expect((await stack.api('GET', '/v1/mcp/servers/everything', { key: OWNER_KEY })).status).toBe(200);
    });

    it('reading needs endpoints:read, writing endpoints:write, and a credential at all', async () => {
      const user = await stack.seedUser();
      const reader = await stack.seedKey({ userId: user, scopes: ['endpoints:read'] });
      const invoker = await stack.seedKey({ userId: user, scopes: ['gateway:invoke'] });
      expect((await stack.api('GET', '/v1/mcp/servers', { key: reader.secret })).status).toBe(200);
      const write = await create({ label: 'Nope', url: UNRESOLVABLE }, reader.secret);
      expect(write.status).toBe(403);
      expect(write.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['endpoints:write'] });
      const read = await stack.api('GET', '/v1/mcp/servers', { key: invoker.secret });
      expect(read.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['endpoints:read'] });
      expect((await stack.api('GET', '/v1/mcp/servers', {})).status).toBe(401);
    });

    it("a tenant's server may not aim at loopback or link-local addresses (400, param url)", async () => {
      const user = await stack.seedUser();
      const { secret } = await stack.seedKey({ userId: user });
      for (const url of [everything.url, 'http://169.254.169.254/mcp', 'http://[::ffff:127.0.0.1]:80/mcp']) {
        const answer = await create({ label: 'Inside', url }, secret);
        expect({ url, status: answer.status, param: answer.body.param }).toEqual({ url, status: 400, param: 'url' });
      }
      const edit = await create({ label: 'Outside', url: UNRESOLVABLE }, secret);
      const moved = await stack.api('PATCH', `/v1/mcp/servers/${edit.body.server.slug}`, {
        key: secret,
        body: { url: everything.url },
      });
      expect(moved).toMatchObject({ status: 400, body: { param: 'url' } });
    });
  });

  describe('hostile input is a 400 in the shared envelope', () => {
    it.each([
      ['no url', { label: 'x' }, 'url'],
      ['not a URL', { label: 'x', url: 'not a url' }, 'url'],
      ['not http(s)', { label: 'x', url: 'ftp://tools.example/mcp' }, 'url'],
      ['a URL past 2 KiB', { label: 'x', url: `https://tools.example/${'a'.repeat(2_100)}` }, 'url'],
      ['an empty label', { label: ' ', url: UNRESOLVABLE }, 'label'],
      ['a bad slug', { label: 'x', url: UNRESOLVABLE, slug: 'Bad_Slug' }, 'slug'],
      ['a slug with "__"', { label: 'x', url: UNRESOLVABLE, slug: 'a__b' }, 'slug'],
      ['a bad header name', { label: 'x', url: UNRESOLVABLE, headers: { 'bad header': 'v' } }, 'headers'],
      ['a huge header', { label: 'x', url: UNRESOLVABLE, headers: { 'x-big': 'v'.repeat(9_000) } }, 'headers'],
      ['a header line break', { label: 'x', url: UNRESOLVABLE, headers: { 'x-a': 'v\r\nx-b: w' } }, 'headers'],
      [
        'too many headers',
        {
          label: 'x',
          url: UNRESOLVABLE,
          headers: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, 'v'])),
        },
        'headers',
      ],
      ['a token with a line break', { label: 'x', url: UNRESOLVABLE, bearer_token: 'a\nb' }, 'bearer_token'],
      ['an unknown field', { label: 'x', url: UNRESOLVABLE, api_key: 'k' }, undefined],
    ])('%s', async (_name, body, param) => {
      const answer = await create(body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_request', request_id: expect.any(String) });
      // A header's issue names the header (`headers.<name>`).
      if (param) expect(answer.body.param).toMatch(new RegExp(`^${param}(\\.|$)`));
    });

    it('a slug path past its bound is 400, an unknown one 404', async () => {
      expect((await stack.api('GET', `/v1/mcp/servers/${'a'.repeat(65)}`, { key: OWNER_KEY })).status).toBe(400);
      expect((await stack.api('GET', '/v1/mcp/servers/no-such', { key: OWNER_KEY })).status).toBe(404);
    });
  });

  describe('what the edge dials', () => {
    it("the edge's table holds the key's servers with their credentials, and drops a deleted one at once", async () => {
      const user = await stack.seedUser();
      const { secret } = await stack.seedKey({ userId: user });
      const created = await create(
        { label: 'Dialed', url: UNRESOLVABLE, headers: { 'x-tenant': HEADER_VALUE }, bearer_token: BEARER },
        secret,
      );
      expect(created.status).toBe(201);
      const servers = await stack.edge.toolServers.serversFor({ userId: user }, 'req_test');
      expect(servers).toEqual([
        {
          slug: 'dialed',
          label: 'Dialed',
          url: UNRESOLVABLE,
          headers: { 'x-tenant': HEADER_VALUE, authorization: `Bearer ${BEARER}` },
          tools: [],
          source: 'account',
          dialAs: 'tenant',
        },
      ]);
      expect((await stack.api('DELETE', '/v1/mcp/servers/dialed', { key: secret })).status).toBe(204);
      await waitFor(async () => (await stack.edge.toolServers.serversFor({ userId: user }, 'req_test')).length === 0);
    });
  });

  describe("a key's allowed_tools", () => {
    it('is taken on mint, shown, changed by PATCH (null: every tool), and reaches the edge at once', async () => {
      const minted = await stack.api('POST', '/v1/keys', {
        key: OWNER_KEY,
        body: { name: 'tools', preset: 'full_access', allowed_tools: ['everything__echo', 'github__*'] },
      });
      expect(minted.status).toBe(201);
      expect(minted.body.allowed_tools).toEqual(['everything__echo', 'github__*']);
      const whoami = () => stack.api('GET', '/v1/keys/whoami', { key: minted.body.key });
      expect((await whoami()).body.allowed_tools).toEqual(['everything__echo', 'github__*']);
      const narrowed = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, {
        key: OWNER_KEY,
        body: { allowed_tools: ['everything__*'] },
      });
      expect(narrowed.body.allowed_tools).toEqual(['everything__*']);
      await waitFor(async () => JSON.stringify((await whoami()).body.allowed_tools) === '["everything__*"]');
      const cleared = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, {
        key: OWNER_KEY,
        body: { allowed_tools: null },
      });
      expect(cleared.body).not.toHaveProperty('allowed_tools');
      await waitFor(async () => (await whoami()).body.allowed_tools === undefined);
      const audit = await stack.api('GET', '/v1/audit?resource_type=key&limit=100', { key: OWNER_KEY });
      // Each grant change is an audit record with the list before and after.
      const grants = audit.body.data
        .filter((event: { resource: { id: string } }) => event.resource.id === minted.body.id)
        .map((event: { action: string; changes: { after?: { allowed_tools?: unknown } } }) => [
          event.action,
          event.changes.after?.allowed_tools,
        ]);
      expect(grants).toEqual([
        ['key.update', null],
        ['key.update', ['everything__*']],
        ['key.create', ['everything__echo', 'github__*']],
      ]);
    });

    it('a key limited to some tools mints only keys limited to tools within them (403)', async () => {
      const limited = await stack.api('POST', '/v1/keys', {
        key: OWNER_KEY,
        body: { name: 'limited', preset: 'full_access', allowed_tools: ['everything__*'] },
      });
      const wider = await stack.api('POST', '/v1/keys', { key: limited.body.key, body: { name: 'wider' } });
      expect(wider.status).toBe(403);
      expect(wider.body).toMatchObject({ error: 'insufficient_scope', param: 'allowed_tools' });
      const within = await stack.api('POST', '/v1/keys', {
        key: limited.body.key,
        body: { name: 'within', allowed_tools: ['everything__echo'] },
      });
      expect(within.status).toBe(201);
    });

    it.each([
      ['an empty glob', ['']],
      ['a glob past 200 characters', ['a'.repeat(201)]],
      ['more than 100 globs', Array.from({ length: 101 }, (_, i) => `s__t${i}`)],
      ['not a list', 'everything__*'],
    ])('%s is a 400', async (_name, allowed) => {
      const answer = await stack.api('POST', '/v1/keys', {
        key: OWNER_KEY,
        body: { name: 'bad', allowed_tools: allowed },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_request', param: expect.stringMatching(/^allowed_tools/) });
    });
  });

  describe('the team pool', () => {
    const slugsFor = async (user: TeamUser, orgId?: string) =>
      (await stack.edge.toolServers.serversFor({ userId: user.id, key: orgId ? { orgId } : undefined }, 'req_test'))
        .map((server) => `${server.slug}:${server.source}`)
        .sort();
    const addServer = async (user: TeamUser, label: string) =>
      expect((await create({ label, url: UNRESOLVABLE }, user.key)).status).toBe(201);
    const eventually = async (user: TeamUser, orgId: string | undefined, expected: string[]) => {
      await waitFor(async () => JSON.stringify(await slugsFor(user, orgId)) === JSON.stringify(expected));
      expect(await slugsFor(user, orgId)).toEqual(expected);
    };

    it("members' servers join the team keys' pool; share_policy, leaving, share_defaults.mcp decide who", async () => {
      const teams = teamFixtures(stack);
      const { team, owner, editor, member } = await teams.teamWithRoles();
      const stranger = await teams.user();
      await addServer(owner, 'Owner tools');
      await addServer(editor, 'Editor tools');
      await addServer(editor, 'Shared');
      await addServer(member, 'Member tools');
      await addServer(member, 'Shared');
      await addServer(stranger, 'Stranger tools');

      // A personal key sees its own servers only; a team key the pool too, its own server winning a shared slug.
      expect(await slugsFor(member)).toEqual(['member-tools:account', 'shared:account']);
      expect(await slugsFor(member, team.id)).toEqual([
        'editor-tools:team',
        'member-tools:account',
        'owner-tools:team',
        'shared:account',
      ]);
      expect(await slugsFor(owner, team.id)).toEqual([
        'editor-tools:team',
        'member-tools:team',
        'owner-tools:account',
        'shared:team',
      ]);
      // Another user's key of no team of theirs sees no pool.
      expect(await slugsFor(stranger, team.id)).toEqual(['stranger-tools:account']);

      // Only editors and above add to the pool under share_policy editors.
      const policy = await stack.api('PATCH', `/v1/teams/${team.id}`, {
        key: owner.key,
        body: { share_policy: 'editors' },
      });
      expect(policy.status).toBe(200);
      await eventually(owner, team.id, ['editor-tools:team', 'owner-tools:account', 'shared:team']);

      // A removed member's servers leave the pool at once.
      expect((await stack.api('DELETE', `/v1/teams/${team.id}/members/${editor.id}`, { key: owner.key })).status).toBe(
        204,
      );
      await eventually(owner, team.id, ['owner-tools:account']);

      // A member who joins while share_defaults.mcp is off does not pool their servers.
      await stack.api('PATCH', `/v1/teams/${team.id}`, {
        key: owner.key,
        body: { share_policy: 'members', share_defaults: { mcp: false } },
      });
      const late = await teams.user();
      await addServer(late, 'Late tools');
      await teams.join(team.id, owner, late);
      await eventually(owner, team.id, ['member-tools:team', 'owner-tools:account', 'shared:team']);

      // A server a member adds reaches the pool's tables on every edge at once.
      await addServer(member, 'Fresh');
      await eventually(owner, team.id, ['fresh:team', 'member-tools:team', 'owner-tools:account', 'shared:team']);
    });

    it('GET /v1/teams/{team_id}/mcp/servers lists the pool team keys see, who shares each, no secret', async () => {
      const teams = teamFixtures(stack);
      const { team, owner, member } = await teams.teamWithRoles();
      const stranger = await teams.user();
      const withSecrets = await create(
        { label: 'Owner secret', url: UNRESOLVABLE, bearer_token: BEARER, headers: { 'x-api-key': HEADER_VALUE } },
        owner.key,
      );
      expect(withSecrets.status).toBe(201);
      await addServer(member, 'Member pooled');
      // A member who joins while share_defaults.mcp is off keeps their servers out of the pool.
      await stack.api('PATCH', `/v1/teams/${team.id}`, { key: owner.key, body: { share_defaults: { mcp: false } } });
      const late = await teams.user();
      await addServer(late, 'Late private');
      await teams.join(team.id, owner, late);

      const listed = await stack.api('GET', `/v1/teams/${team.id}/mcp/servers`, { key: late.key });
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ object: 'list', has_more: false });
      const data = listed.body.data as Array<Record<string, unknown>>;
      expect(data.map((server) => server.slug)).toEqual(['member-pooled', 'owner-secret']);
      expect(data[1]).toEqual({
        id: expect.stringMatching(/^mcp_/),
        object: 'team_mcp_server',
        slug: 'owner-secret',
        label: 'Owner secret',
        url: UNRESOLVABLE,
        tools: [],
        updated_at: expect.any(String),
        shared_by: { user_id: owner.id, email: owner.email },
      });
      expect(JSON.stringify(listed.body)).not.toMatch(new RegExp(`${BEARER}|${HEADER_VALUE}|x-api-key|bearer`, 'i'));

      // The same pool a team key of the member who does not share dials, besides its own server.
      const table = await slugsFor(late, team.id);
      expect(table.filter((slug) => slug.endsWith(':team'))).toEqual(
        data.map((server) => `${server.slug}:team`).sort(),
      );
      expect(table).toContain('late-private:account');

      // Paged like the other lists.
      const first = await stack.api('GET', `/v1/teams/${team.id}/mcp/servers?limit=1`, { key: member.key });
      expect(first.body).toMatchObject({ has_more: true, data: [{ slug: 'member-pooled' }] });
      const next = await stack.api('GET', `/v1/teams/${team.id}/mcp/servers?limit=1&after_id=${first.body.last_id}`, {
        key: member.key,
      });
      expect(next.body).toMatchObject({ has_more: false, data: [{ slug: 'owner-secret' }] });

      // A non-member gets the 404 of every team route.
      const outside = await stack.api('GET', `/v1/teams/${team.id}/mcp/servers`, { key: stranger.key });
      expect(outside.status).toBe(404);
      expect(outside.body).toMatchObject({ error: 'not_found', param: 'team_id' });
    });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

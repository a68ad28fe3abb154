import { hashSecret } from '@sbc/ids';
import { SCOPES, type Scope } from '@sbc/scopes';
import { startStack, type AccountSurfaceStack } from '../support/stack';

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
const CAPABILITIES = {
  tools_count: 3,
  hub_port: 7777,
  helper_version: '1.2.0',
  held_vendors: ['anthropic'],
  held_models: ['claude-sonnet-4'],
};

describe('devices: pairing (RFC 8628), the device list, heartbeats and unlinking', () => {
  let stack: AccountSurfaceStack;
  let session: string;
  let otherSession: string;

  beforeAll(async () => {
    // A 10-minute auth cache: only the revocation broadcast can explain an unlinked device's token being refused.
    stack = await startStack({ label: 'devices', edgeEnv: { AUTH_CACHE_FRESH_MS: '600000' } });
    session = await stack.seedSession();
    otherSession = await stack.seedSession(await stack.seedUser());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const api = (...args: Parameters<AccountSurfaceStack['api']>) => stack.api(...args);
  const grantOf = (deviceCode: string) =>
    stack.account.database.prisma.devicePairing.findUnique({
      where: { deviceCodeHash: new Uint8Array(hashSecret(deviceCode)) },
    });
  const keyWithout = (...missing: Scope[]) =>
    stack.seedKey({ scopes: SCOPES.filter((scope) => !missing.includes(scope)) });

  const startPairing = async (body: Record<string, unknown> = {}) => {
    const res = await api('POST', '/v1/devices/pair', {
      body: { kind: 'desktop', label: 'Work laptop', fingerprint: 'fp-work-laptop', ...body },
    });
    expect(res.status).toBe(200);
    return res.body as { device_code: string; user_code: string; interval: number };
  };
  const poll = (deviceCode: string) => api('POST', '/v1/devices/pair/token', { body: { device_code: deviceCode } });

  /** A device paired to the account behind `approver` (a session). */
  const pairDevice = async (approver = session, label = 'Paired device') => {
    const grant = await startPairing({ label, fingerprint: `fp-${label}` });
    expect(
      (await api('POST', '/v1/devices/pair/approve', { key: approver, body: { user_code: grant.user_code } })).status,
    ).toBe(200);
    const res = await poll(grant.device_code);
    expect(res.status).toBe(200);
    return { token: res.body.device_token as string, device: res.body.device };
  };

  describe('pairing', () => {
    it('runs the whole flow: pending, slow_down, approval, one token that works like a session', async () => {
      const grant = await api('POST', '/v1/devices/pair', {
        body: { kind: 'desktop', label: 'Work laptop', fingerprint: 'fp-1', capabilities: CAPABILITIES },
      });
      expect(grant.status).toBe(200);
      expect(grant.body).toMatchObject({
        user_code: expect.stringMatching(USER_CODE),
        verification_uri: 'https://gw.test/device',
        expires_in: 600,
        interval: 5,
      });
      expect(grant.body.device_code.length).toBeGreaterThanOrEqual(40);
      expect(grant.body.verification_uri_complete).toBe(`https://gw.test/device?user_code=${grant.body.user_code}`);
      const { device_code: deviceCode, user_code: userCode } = grant.body;

      const pending = await poll(deviceCode);
      expect(pending.status).toBe(400);
      expect(pending.body).toMatchObject({
        error: 'authorization_pending',
        error_description: expect.any(String),
        doc_url: 'https://gw.test/developers#errors-authorization_pending',
      });

      const tooFast = await poll(deviceCode);
      expect(tooFast.status).toBe(400);
      expect(tooFast.body).toMatchObject({ error: 'slow_down', interval: 10 });
      expect((await grantOf(deviceCode))!.intervalS).toBe(10);

      // Typed as a person might: lower case, no dash.
      const approved = await api('POST', '/v1/devices/pair/approve', {
        key: session,
        body: { user_code: userCode.replace('-', '').toLowerCase() },
      });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({
        ok: true,
        status: 'approved',
        user_code: userCode,
        device: { kind: 'desktop', label: 'Work laptop', fingerprint: 'fp-1', capabilities: CAPABILITIES },
      });

      const issued = await poll(deviceCode);
      expect(issued.status).toBe(200);
      expect(issued.body.device_token).toMatch(/^sbd_[0-9A-Za-z]{32}$/);
      expect(issued.body.device).toMatchObject({
        id: expect.stringMatching(/^dev_/),
        object: 'device',
        kind: 'desktop',
        label: 'Work laptop',
        last_seen_at: null,
        online: false,
        capabilities: CAPABILITIES,
      });
      const token = issued.body.device_token as string;

      const again = await poll(deviceCode);
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_grant');

      // Stored as hashes only.
      const row = await stack.account.database.prisma.device.findUnique({ where: { id: issued.body.device.id } });
      expect(Buffer.from(row!.tokenHash).equals(hashSecret(token))).toBe(true);
      expect(row!.userId).toBe(stack.ownerId);
      expect((await grantOf(deviceCode))!.status).toBe('consumed');

      expect((await api('GET', '/v1/models', { key: token })).status).toBe(200);
      const list = await api('GET', '/v1/devices', { key: token });
      expect(list.status).toBe(200);
      expect(list.body.data.map((device: { id: string }) => device.id)).toContain(issued.body.device.id);
    });

    it('hands an approved grant to exactly one of several concurrent polls', async () => {
      const grant = await startPairing();
      await api('POST', '/v1/devices/pair/approve', { key: session, body: { user_code: grant.user_code } });
      const answers = await Promise.all(Array.from({ length: 6 }, () => poll(grant.device_code)));
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
      expect(answers.filter((answer) => answer.status === 400).map((answer) => answer.body.error)).toEqual(
        Array(5).fill('invalid_grant'),
      );
    });

    it('pairs the device to the account of the session that approved it', async () => {
      const { device } = await pairDevice(otherSession, 'Other laptop');
      expect((await api('GET', `/v1/devices/${device.id}`, { key: otherSession })).status).toBe(200);
      expect((await api('GET', `/v1/devices/${device.id}`, { key: session })).status).toBe(404);
    });

    it('refuses approval by a caller key or a device token: a signed-in session only', async () => {
      const grant = await startPairing();
      const key = await stack.seedKey();
      const byKey = await api('POST', '/v1/devices/pair/approve', {
        key: key.secret,
        body: { user_code: grant.user_code },
      });
      expect(byKey.status).toBe(403);
      expect(byKey.body.error).toBe('insufficient_scope');
      const { token } = await pairDevice();
      expect(
        (await api('POST', '/v1/devices/pair/approve', { key: token, body: { user_code: grant.user_code } })).status,
      ).toBe(403);
      expect((await api('POST', '/v1/devices/pair/approve', { body: { user_code: grant.user_code } })).status).toBe(
        401,
      );
      expect((await poll(grant.device_code)).body.error).toBe('authorization_pending');
    });

    it('approving an unknown, malformed or already approved code is 404', async () => {
      for (const userCode of ['BCDF-GHJK', 'not a code']) {
        const res = await api('POST', '/v1/devices/pair/approve', { key: session, body: { user_code: userCode } });
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ error: 'not_found', param: 'user_code' });
      }
      const grant = await startPairing();
      expect(
        (await api('POST', '/v1/devices/pair/approve', { key: session, body: { user_code: grant.user_code } })).status,
      ).toBe(200);
      expect(
        (await api('POST', '/v1/devices/pair/approve', { key: otherSession, body: { user_code: grant.user_code } }))
          .status,
      ).toBe(404);
    });

    it('an expired grant answers expired_token and can no longer be approved', async () => {
      const grant = await startPairing();
      await stack.account.database.prisma.devicePairing.update({
        where: { deviceCodeHash: new Uint8Array(hashSecret(grant.device_code)) },
        data: { expiresAt: new Date(Date.now() - 1_000) },
      });
      expect(
        (await api('POST', '/v1/devices/pair/approve', { key: session, body: { user_code: grant.user_code } })).status,
      ).toBe(404);
      const res = await poll(grant.device_code);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('expired_token');
    });

    it('a denied grant answers access_denied and can no longer be approved', async () => {
      const grant = await startPairing();
      const denied = await api('POST', '/v1/devices/pair/deny', { key: session, body: { user_code: grant.user_code } });
      expect(denied.status).toBe(200);
      expect(denied.body).toMatchObject({ ok: true, status: 'denied', user_code: grant.user_code });
      expect((await poll(grant.device_code)).body.error).toBe('access_denied');
      expect(
        (await api('POST', '/v1/devices/pair/approve', { key: session, body: { user_code: grant.user_code } })).status,
      ).toBe(404);
    });

    it('an unknown device code is invalid_grant; a malformed poll is invalid_request', async () => {
      const unknown = await poll('never-issued');
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toBe('invalid_grant');
      const malformed = await api('POST', '/v1/devices/pair/token', { body: {} });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ error: 'invalid_request', param: 'device_code' });
    });

    it('validates the pairing request: every problem listed, unknown fields refused', async () => {
      const res = await api('POST', '/v1/devices/pair', {
        body: {
          kind: 'desktop',
          label: '',
          capabilities: { tools_count: -1, held_vendors: [], held_models: [] },
          extra: 1,
        },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      const paths = res.body.issues.map((issue: { path: string }) => issue.path);
      expect(paths).toEqual(expect.arrayContaining(['label', 'fingerprint', 'capabilities.tools_count']));
      const badAgent = await api('POST', '/v1/devices/pair', {
        body: { kind: 'agent', label: 'vm', fingerprint: 'fp', agent: { agent_vendor: 'generic', tier: 'gold' } },
      });
      expect(badAgent.status).toBe(400);
      expect(badAgent.body.param).toBe('agent.tier');
    });

    it('keeps the agent facet a device declared', async () => {
      const grant = await startPairing({ kind: 'agent', agent: { agent_vendor: 'generic', tier: 'data' } });
      await api('POST', '/v1/devices/pair/approve', { key: session, body: { user_code: grant.user_code } });
      const res = await poll(grant.device_code);
      expect(res.body.device).toMatchObject({ kind: 'agent', agent: { agent_vendor: 'generic', tier: 'data' } });
      expect(res.body.device.capabilities).toBeUndefined();
    });
  });

  describe('the device list', () => {
    it('pages newest first with limit, after_id and before_id', async () => {
      const user = await stack.seedUser();
      const userSession = await stack.seedSession(user);
      const ids: string[] = [];
      for (const label of ['first', 'second', 'third']) ids.push((await pairDevice(userSession, label)).device.id);
      const [first, second, third] = ids;

      const page1 = await api('GET', '/v1/devices?limit=2', { key: userSession });
      expect(page1.status).toBe(200);
      expect(page1.body).toMatchObject({ object: 'list', has_more: true, first_id: third, last_id: second });
      expect(page1.body.data.map((device: { label: string }) => device.label)).toEqual(['third', 'second']);
      const page2 = await api('GET', `/v1/devices?limit=2&after_id=${second}`, { key: userSession });
      expect(page2.body).toMatchObject({ has_more: false, first_id: first, last_id: first });
      const back = await api('GET', `/v1/devices?limit=1&before_id=${first}`, { key: userSession });
      expect(back.body.data.map((device: { id: string }) => device.id)).toEqual([second]);
    });

    it('gets and renames a device; the new label is what the list shows', async () => {
      const { device } = await pairDevice(session, 'Old name');
      const got = await api('GET', `/v1/devices/${device.id}`, { key: session });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        id: device.id,
        object: 'device',
        label: 'Old name',
        fingerprint: 'fp-Old name',
        online: false,
        last_seen_at: null,
      });

      const renamed = await api('PATCH', `/v1/devices/${device.id}`, { key: session, body: { label: '  New name ' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ id: device.id, label: 'New name' });
      expect((await api('GET', `/v1/devices/${device.id}`, { key: session })).body.label).toBe('New name');
    });

    it('refuses bad input with 400 naming the field', async () => {
      const { device } = await pairDevice();
      expect((await api('GET', '/v1/devices?limit=0', { key: session })).body).toMatchObject({
        error: 'invalid_request',
        param: 'limit',
      });
      expect((await api('GET', '/v1/devices/not-a-device', { key: session })).body).toMatchObject({
        error: 'invalid_request',
        param: 'device_id',
      });
      for (const body of [{ label: '' }, { label: 'x'.repeat(65) }, { label: 'ok', kind: 'cli' }]) {
        const res = await api('PATCH', `/v1/devices/${device.id}`, { key: session, body });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_request');
      }
      expect((await api('DELETE', '/v1/devices/dev_nope', { key: session })).status).toBe(400);
    });

    it('needs a credential: 401 without one', async () => {
      const { device } = await pairDevice();
      for (const [method, path] of [
        ['GET', '/v1/devices'],
        ['GET', `/v1/devices/${device.id}`],
        ['PATCH', `/v1/devices/${device.id}`],
        ['DELETE', `/v1/devices/${device.id}`],
      ] as const) {
        const res = await api(method, path, { body: method === 'PATCH' ? { label: 'x' } : undefined });
        expect({ method, path, status: res.status, error: res.body.error }).toEqual({
          method,
          path,
          status: 401,
          error: 'unauthorized',
        });
      }
    });

    it(
      'reading needs devices:read and changing needs ' + 'devices:write (403 insufficient_scope with required_scopes)',
      async () => {
        const { device } = await pairDevice();
        const noRead = await keyWithout('devices:read');
        const noWrite = await keyWithout('devices:write');
        for (const path of ['/v1/devices', `/v1/devices/${device.id}`]) {
          const res = await api('GET', path, { key: noRead.secret });
          expect(res.status).toBe(403);
          expect(res.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['devices:read'] });
          expect((await api('GET', path, { key: noWrite.secret })).status).toBe(200);
        }
        const patch = await api('PATCH', `/v1/devices/${device.id}`, { key: noWrite.secret, body: { label: 'x' } });
        expect(patch.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['devices:write'] });
        const del = await api('DELETE', `/v1/devices/${device.id}`, { key: noWrite.secret });
        expect(del.body).toMatchObject({ error: 'insufficient_scope', required_scopes: ['devices:write'] });
        const key = await stack.seedKey({ scopes: ['devices:read', 'devices:write'] });
        expect(
          (await api('PATCH', `/v1/devices/${device.id}`, { key: key.secret, body: { label: 'By key' } })).status,
        ).toBe(200);
      },
    );

    it("another account's device is 404 on every route, as is an unknown one", async () => {
      const { device } = await pairDevice(otherSession, 'Not yours');
      for (const id of [device.id, 'dev_00000000000000000000000000']) {
        expect((await api('GET', `/v1/devices/${id}`, { key: session })).body).toMatchObject({ error: 'not_found' });
        expect((await api('PATCH', `/v1/devices/${id}`, { key: session, body: { label: 'mine now' } })).status).toBe(
          404,
        );
        expect((await api('DELETE', `/v1/devices/${id}`, { key: session })).status).toBe(404);
      }
      const list = await api('GET', '/v1/devices?limit=100', { key: session });
      expect(list.body.data.map((item: { id: string }) => item.id)).not.toContain(device.id);
      expect((await api('GET', `/v1/devices/${device.id}`, { key: otherSession })).body.label).toBe('Not yours');
    });
  });

  describe('unlinking', () => {
    it('removes the device and refuses its token (401) at once, though the edge had it cached', async () => {
      const { token, device } = await pairDevice(session, 'To unlink');
      expect((await api('GET', '/v1/models', { key: token })).status).toBe(200);

      const res = await api('DELETE', `/v1/devices/${device.id}`, { key: session });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: device.id, object: 'device', deleted: true });

      // The broadcast is asynchronous; allow it a moment, far below the 10-minute cache window.
      const deadline = Date.now() + 2_000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await api('GET', '/v1/models', { key: token })).status;
        if (status === 401) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(status).toBe(401);
      expect((await api('GET', `/v1/devices/${device.id}`, { key: session })).status).toBe(404);
      expect((await api('DELETE', `/v1/devices/${device.id}`, { key: session })).status).toBe(404);
    });
  });

  describe('heartbeats', () => {
    const heartbeat = (key: string | undefined, body: unknown = {}) =>
      api('POST', '/v1/devices/heartbeat', { key, body });
    const rowOf = (id: string) => stack.account.database.prisma.device.findUnique({ where: { id } });

    it('a heartbeat sets last_seen_at and shows the device online', async () => {
      const { token, device } = await pairDevice(session, 'Beating');
      const before = Date.now();
      const res = await heartbeat(token);
      expect(res.status).toBe(204);
      const got = await api('GET', `/v1/devices/${device.id}`, { key: session });
      expect(got.body.online).toBe(true);
      expect(Date.parse(got.body.last_seen_at)).toBeGreaterThanOrEqual(before - 1_000);
    });

    it('is written at most once per window, with the capabilities sent alongside', async () => {
      const { token, device } = await pairDevice(session, 'Chatty');
      await heartbeat(token);
      const first = (await rowOf(device.id))!.lastSeenAt!;
      await new Promise((resolve) => setTimeout(resolve, 20));
      await heartbeat(token, { capabilities: CAPABILITIES });
      expect((await rowOf(device.id))!.lastSeenAt).toEqual(first);
      expect((await rowOf(device.id))!.capabilities).toBeNull();

      // Once the recorded heartbeat is older than the window, the next one is written with its capabilities.
      await stack.account.database.prisma.device.update({
        where: { id: device.id },
        data: { lastSeenAt: new Date(Date.now() - 30_000) },
      });
      await heartbeat(token, { capabilities: CAPABILITIES });
      expect((await rowOf(device.id))!.lastSeenAt!.getTime()).toBeGreaterThan(first.getTime());
      expect((await api('GET', `/v1/devices/${device.id}`, { key: session })).body.capabilities).toEqual(CAPABILITIES);
    });

    it('a device whose last heartbeat is over 90 s old is offline', async () => {
      const { device } = await pairDevice(session, 'Quiet');
      await stack.account.database.prisma.device.update({
        where: { id: device.id },
        data: { lastSeenAt: new Date(Date.now() - 91_000) },
      });
      const got = await api('GET', `/v1/devices/${device.id}`, { key: session });
      expect(got.body).toMatchObject({ online: false, last_seen_at: expect.any(String) });
    });

    it(
      'only a device token may send one: 401 without a ' + 'credential, 403 for a key or a session, 400 for a bad body',
      async () => {
        const { token } = await pairDevice();
        expect((await heartbeat(undefined)).status).toBe(401);
        const key = await stack.seedKey();
        for (const credential of [key.secret, session]) {
          const res = await heartbeat(credential);
          expect(res.status).toBe(403);
          expect(res.body.error).toBe('insufficient_scope');
        }
        const bad = await heartbeat(token, { capabilities: { tools_count: 'many' } });
        expect(bad.status).toBe(400);
        expect(bad.body.param).toBe('capabilities.tools_count');
      },
    );
  });
});

import { startStack, OWNER_KEY, type StackWith } from '../support/stack';

interface AuditRecord {
  id: string;
  action: string;
  actor: { user_id: string; key_id?: string };
  resource: { type: string; id: string };
  changes: { before: Record<string, unknown> | null; after: Record<string, unknown> | null };
}

/**
 * The changes other services own reach the account service's audit log: webhook endpoints (runs) and the
 * operators' X builds actions (x-builds), with the actor the edge saw.
 */
describe('the audit log across services', () => {
  // The sim streams at 400 tokens a second, so the operator's long build holds the one build slot for the test.
  const options = { label: 'audit_services', simTokensPerSecond: 400, runs: {}, builds: {} } as const;
  let stack: StackWith<typeof options>;
  beforeAll(async () => {
    stack = await startStack(options);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const records = async (reader: string, query = ''): Promise<AuditRecord[]> => {
    const page = await stack.api('GET', `/v1/audit?limit=100${query}`, { key: reader });
    expect(page.status).toBe(200);
    return page.body.data;
  };

  it('records a webhook endpoint’s creation and deletion without its secret or the token in its URL', async () => {
    const owner = await stack.seedKey();
    const created = await stack.api('POST', '/v1/webhooks', {
      key: owner.secret,
      body: { url: `${stack.sim.url}/hooks/audit?token=receiver-secret-token`, events: ['run.succeeded'] },
    });
    expect(created.status).toBe(201);
    expect((await stack.api('DELETE', `/v1/webhooks/${created.body.id}`, { key: owner.secret })).status).toBe(200);

    const log = await records(owner.secret, '&resource_type=webhook');
    expect(log.map((r) => r.action)).toEqual(['webhook.delete', 'webhook.create']);
    expect(log[1]).toMatchObject({
      actor: { user_id: stack.ownerId, key_id: owner.id },
      resource: { type: 'webhook', id: created.body.id },
      changes: { before: null, after: { id: created.body.id, events: ['run.succeeded'] } },
    });
    expect(log[0]!.changes).toMatchObject({ before: { id: created.body.id }, after: null });
    const text = JSON.stringify(log);
    expect(text).not.toContain(created.body.secret);
    expect(text).not.toContain('receiver-secret-token');

    const stranger = (await stack.seedKey({ userId: await stack.seedUser() })).secret;
    expect(await records(stranger, '&resource_type=webhook')).toEqual([]);
  });

  it('records the operators’ X builds actions, which the job’s owner does not read', async () => {
    // One build slot, held by the operator's long build, so the tenant's job stays queued.
    const narrowed = await stack.api('PATCH', '/v1/x-builds/queue', { key: OWNER_KEY, body: { max_concurrent: 1 } });
    expect(narrowed.status).toBe(200);
    const long = await stack.api('POST', '/v1/x-builds', {
      key: OWNER_KEY,
      body: { source: { type: 'api', prompt: 'A long page sim-tokens:40000' } },
    });
    expect(long.status).toBe(201);
    await stack.waitForJob(OWNER_KEY, long.body.id, (building) => building.status === 'building', 60_000);
    const tenantId = await stack.seedUser();
    const tenant = (await stack.seedKey({ userId: tenantId })).secret;
    const job = await stack.api('POST', '/v1/x-builds', {
      key: tenant,
      body: { source: { type: 'api', prompt: 'A page that stays queued' } },
    });
    expect(job.status).toBe(201);
    expect((await stack.api('POST', `/v1/x-builds/${job.body.id}/pin`, { key: OWNER_KEY })).status).toBe(200);
    expect((await stack.api('PUT', '/v1/x-builds/blocklist/audit-spammer', { key: OWNER_KEY, body: {} })).status).toBe(
      200,
    );
    expect((await stack.api('DELETE', '/v1/x-builds/blocklist/audit-spammer', { key: OWNER_KEY })).status).toBe(200);

    const log = await records(OWNER_KEY);
    const actions = log.map((r) => `${r.action} ${r.resource.id}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        'x_builds_queue.update queue',
        `x_build.pin ${job.body.id}`,
        'x_builds_block.create audit-spammer',
        'x_builds_block.delete audit-spammer',
      ]),
    );
    expect(log.find((r) => r.action === 'x_build.pin')).toMatchObject({
      actor: { user_id: stack.ownerId },
      changes: { before: { pinned: false, status: 'queued' }, after: { pinned: true } },
    });
    expect(log.find((r) => r.action === 'x_builds_queue.update')).toMatchObject({
      changes: { after: { max_concurrent: 1 } },
    });
    // The tenant reads the build key the service minted for its job on its account, and no operator's action.
    const tenantLog = await records(tenant);
    expect(tenantLog.filter((r) => r.resource.type.startsWith('x_build') || r.actor.user_id !== tenantId)).toEqual([]);
  }, 90_000);
});

import { checkHealth } from './check-health';
import { startEchoServer, type EchoFixture } from './echo-fixture';

describe('a unary call over loopback', () => {
  let fixture: EchoFixture;
  beforeAll(async () => {
    fixture = await startEchoServer();
  });
  afterAll(() => fixture.close());

  it('returns the message the handler built', async () => {
    const response = await fixture.client.echo({ text: 'héllo' });
    expect(response.$typeName).toBe('sbc.rpctest.v1.EchoResponse');
    expect(response.text).toBe('héllo');
  });

  it("hands the caller's request id to the handler", async () => {
    const response = await fixture.client.echo({ text: 'x' }, { requestId: 'req_01HZX' });
    expect(response.requestId).toBe('req_01HZX');
  });

  it('reads an absent request id as empty', async () => {
    const response = await fixture.client.echo({ text: 'x' });
    expect(response.requestId).toBe('');
  });

  it("hands the caller's actor to the handler, and none when the call names none", async () => {
    const actor = { userId: 'usr_1', keyId: 'key_1', session: 'ses_0123', deviceId: 'dev_1', ip: '203.0.113.9' };
    await fixture.client.echo({ text: 'x' }, { actor });
    expect(fixture.contexts.at(-1)?.actor).toEqual(actor);
    await fixture.client.echo({ text: 'x' }, { actor: { userId: 'usr_2' } });
    expect(fixture.contexts.at(-1)?.actor).toEqual({ userId: 'usr_2' });
    await fixture.client.echo({ text: 'x' });
    expect(fixture.contexts.at(-1)?.actor).toBeUndefined();
  });

  it('gives every call a deadline the handler can see', async () => {
    const before = Date.now();
    const response = await fixture.client.echo({ text: 'x' });
    expect(response.hasDeadline).toBe(true);
    const deadline = fixture.contexts.at(-1)?.deadline?.getTime() ?? 0;
    // The client's default is 5 s.
    expect(deadline).toBeGreaterThan(before + 4_000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it('reports the added service and the whole server as serving', async () => {
    await expect(checkHealth(fixture.address)).resolves.toBe('SERVING');
    await expect(checkHealth(fixture.address, 'sbc.rpctest.v1.EchoService')).resolves.toBe('SERVING');
  });
});

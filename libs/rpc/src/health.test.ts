import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from '@sbc/proto/grpc/health/v1/health_pb';
import { checkHealth } from './check-health';
import { createRpcClient } from './client';
import { eventually, startEchoServer, type EchoFixture } from './echo-fixture';

const ECHO = 'sbc.rpctest.v1.EchoService';

describe('grpc.health.v1', () => {
  let fixture: EchoFixture;
  beforeEach(async () => {
    fixture = await startEchoServer();
  });
  afterEach(() => fixture.close());

  it('Check reflects setServing for one service without touching the others', async () => {
    fixture.server.setServing(ECHO, false);
    await expect(checkHealth(fixture.address, ECHO)).resolves.toBe('NOT_SERVING');
    await expect(checkHealth(fixture.address)).resolves.toBe('SERVING');
    fixture.server.setServing(ECHO, true);
    await expect(checkHealth(fixture.address, ECHO)).resolves.toBe('SERVING');
    fixture.server.setServing('', false);
    await expect(checkHealth(fixture.address)).resolves.toBe('NOT_SERVING');
  });

  it('Check answers SERVICE_UNKNOWN for a service the server does not have', async () => {
    await expect(checkHealth(fixture.address, 'sbc.nope.v1.NopeService')).resolves.toBe('SERVICE_UNKNOWN');
  });

  it('setServing refuses a service name the server does not have', () => {
    expect(() => fixture.server.setServing('sbc.nope.v1.NopeService', false)).toThrow(/NopeService/);
  });

  it('Watch sends the current status, then every change, then NOT_SERVING and its end on stop', async () => {
    const health = createRpcClient(Health, { target: fixture.address, deadlineMs: 10_000 });
    const seen: ServingStatus[] = [];
    let ended = false;
    const watching = (async () => {
      for await (const { status } of health.watch({ service: ECHO })) seen.push(status);
      ended = true;
    })();
    try {
      await eventually(() => seen.length === 1);
      fixture.server.setServing(ECHO, false);
      await eventually(() => seen.length === 2);
      fixture.server.setServing(ECHO, true);
      await eventually(() => seen.length === 3);
      const stopStarted = Date.now();
      await fixture.server.stop(5_000);
      // An open Watch must not hold shutdown for the whole grace period.
      expect(Date.now() - stopStarted).toBeLessThan(2_000);
      await watching;
      expect(seen).toEqual([
        ServingStatus.SERVING,
        ServingStatus.NOT_SERVING,
        ServingStatus.SERVING,
        ServingStatus.NOT_SERVING,
      ]);
      expect(ended).toBe(true);
    } finally {
      health.close();
    }
  });

  it('Watch on an unknown service reports SERVICE_UNKNOWN and stays open', async () => {
    const health = createRpcClient(Health, { target: fixture.address, deadlineMs: 10_000 });
    const controller = new AbortController();
    const seen: ServingStatus[] = [];
    const watching = (async () => {
      for await (const { status } of health.watch(
        { service: 'sbc.nope.v1.NopeService' },
        { signal: controller.signal },
      ))
        seen.push(status);
    })().catch(() => undefined);
    try {
      await eventually(() => seen.length === 1);
      expect(seen).toEqual([ServingStatus.SERVICE_UNKNOWN]);
      controller.abort();
      await watching;
    } finally {
      health.close();
    }
  });

  it('after stop the server no longer answers and a readiness check reads UNKNOWN', async () => {
    await fixture.server.stop(100);
    await expect(checkHealth(fixture.address, '', 500)).resolves.toBe('UNKNOWN');
  });

  it('stop cancels calls still running after the grace period', async () => {
    const pending = fixture.client.echo({ sleepMs: 10_000 }, { deadlineMs: 10_000 }).catch((e: unknown) => e);
    await eventually(() => fixture.contexts.length === 1);
    const started = Date.now();
    await fixture.server.stop(100);
    expect(Date.now() - started).toBeLessThan(2_000);
    await eventually(() => fixture.contexts[0]?.signal.aborted === true);
    expect(await pending).toMatchObject({ code: 'service_unavailable' });
  });
});

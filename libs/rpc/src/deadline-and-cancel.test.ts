import { ApiError } from '@sbc/errors';
import { EchoService } from '@sbc/proto/sbc/rpctest/v1/echo_pb';
import { createRpcClient } from './client';
import { eventually, startEchoServer, type EchoFixture } from './echo-fixture';

describe('deadlines and cancellation', () => {
  let fixture: EchoFixture;
  beforeAll(async () => {
    fixture = await startEchoServer();
  });
  afterAll(() => fixture.close());

  it(
    'a call past its deadline fails as service_unavailable ' + 'naming the service, and the handler is told to stop',
    async () => {
      const before = fixture.contexts.length;
      const started = Date.now();
      const error = await fixture.client
        .echo({ text: 'slow', sleepMs: 3_000 }, { deadlineMs: 150 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('service_unavailable');
      expect((error as ApiError).message).toContain('sbc.rpctest.v1.EchoService');
      expect(Date.now() - started).toBeLessThan(2_000);
      await eventually(() => fixture.contexts[before]?.signal.aborted === true);
    },
  );

  it('the client default deadline applies when the call sets none', async () => {
    const hasty = createRpcClient(EchoService, { target: fixture.address, deadlineMs: 100 });
    try {
      await expect(hasty.echo({ sleepMs: 3_000 })).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      hasty.close();
    }
  });

  it("aborting the caller's signal cancels the call and aborts the handler's signal", async () => {
    const before = fixture.contexts.length;
    const controller = new AbortController();
    const pending = fixture.client.echo({ text: 'wait', sleepMs: 3_000 }, { signal: controller.signal });
    await eventually(() => fixture.contexts.length > before);
    const ctx = fixture.contexts[before];
    expect(ctx?.signal.aborted).toBe(false);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'client_closed_request' });
    await eventually(() => ctx?.signal.aborted === true);
  });

  it('an already aborted signal fails the call without sending it', async () => {
    const calls = fixture.contexts.length;
    await expect(fixture.client.echo({ text: 'x' }, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'client_closed_request',
    });
    expect(fixture.contexts.length).toBe(calls);
  });

  it('a client whose server is gone fails fast as service_unavailable', async () => {
    const orphan = createRpcClient(EchoService, { target: '127.0.0.1:1', deadlineMs: 2_000 });
    try {
      const error = (await orphan.echo({}).catch((e: unknown) => e)) as ApiError;
      expect(error.code).toBe('service_unavailable');
      expect(error.message).toBe('sbc.rpctest.v1.EchoService is unavailable.');
    } finally {
      orphan.close();
    }
  });
});

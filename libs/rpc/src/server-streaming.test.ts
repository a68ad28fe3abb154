import { ApiError } from '@sbc/errors';
import { eventually, startEchoServer, type EchoFixture } from './echo-fixture';

async function collect<T>(stream: AsyncIterable<T>): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of stream) items.push(item);
    return { items };
  } catch (error) {
    return { items, error };
  }
}

describe('server streaming', () => {
  let fixture: EchoFixture;
  beforeAll(async () => {
    fixture = await startEchoServer();
  });
  afterAll(() => fixture.close());

  it('delivers every message in order and then ends', async () => {
    const { items, error } = await collect(
      fixture.client.echoStream({ text: 'tick', count: 5 }, { requestId: 'req_stream' }),
    );
    expect(error).toBeUndefined();
    expect(items.map((item) => item.index)).toEqual([0, 1, 2, 3, 4]);
    expect(items.every((item) => item.text === 'tick' && item.$typeName === 'sbc.rpctest.v1.EchoStreamResponse')).toBe(
      true,
    );
    expect(fixture.contexts.at(-1)?.requestId).toBe('req_stream');
  });

  it('a failure mid-stream arrives as the ApiError after the messages sent before it', async () => {
    const { items, error } = await collect(
      fixture.client.echoStream({ text: 't', count: 5, failAfter: 2, failWith: 'rate_limited' }),
    );
    expect(items.map((item) => item.index)).toEqual([0, 1]);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('rate_limited');
  });

  it('an unknown failure mid-stream arrives as internal_error without its message', async () => {
    const { items, error } = await collect(fixture.client.echoStream({ count: 3, failAfter: 1, failWith: 'plain' }));
    expect(items).toHaveLength(1);
    expect((error as ApiError).code).toBe('internal_error');
    expect((error as ApiError).message).not.toContain('hunter2');
  });

  it('stopping iteration early cancels the call and aborts the handler', async () => {
    for await (const item of fixture.client.echoStream({ count: 100, intervalMs: 20 })) {
      if (item.index === 1) break;
    }
    const ctx = fixture.contexts.at(-1);
    await eventually(() => ctx?.signal.aborted === true);
  });

  it("aborting the caller's signal ends the stream with client_closed_request and aborts the handler", async () => {
    const controller = new AbortController();
    const items: number[] = [];
    const error = await (async () => {
      for await (const item of fixture.client.echoStream(
        { count: 100, intervalMs: 20 },
        { signal: controller.signal },
      )) {
        items.push(item.index);
        if (item.index === 2) controller.abort();
      }
    })().catch((e: unknown) => e);
    expect((error as ApiError).code).toBe('client_closed_request');
    expect(items.length).toBeLessThan(100);
    const ctx = fixture.contexts.at(-1);
    await eventually(() => ctx?.signal.aborted === true);
  });

  it('a stream past its deadline fails as service_unavailable', async () => {
    const { items, error } = await collect(
      fixture.client.echoStream({ count: 100, intervalMs: 50 }, { deadlineMs: 200 }),
    );
    expect(items.length).toBeLessThan(100);
    expect((error as ApiError).code).toBe('service_unavailable');
  });
});

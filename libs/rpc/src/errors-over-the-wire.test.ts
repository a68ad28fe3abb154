import { ApiError, errorSpec } from '@sbc/errors';
import { startEchoServer, type EchoFixture } from './echo-fixture';

describe('errors over the wire', () => {
  const thrown = new ApiError('insufficient_scope', 'This key may not manage teams.', {
    param: 'team_id',
    issues: [
      { path: 'team_id', code: 'forbidden', message: 'not your team' },
      { path: 'members.0.role', code: 'invalid_value', message: 'role must be one of owner, member' },
    ],
    extra: { required_scopes: ['teams:write'], budget: { limit_usd: 12.5, spent: 3 } },
  });
  let fixture: EchoFixture;
  beforeAll(async () => {
    fixture = await startEchoServer({
      async echo(request) {
        if (request.failWith === 'exact') throw thrown;
        if (request.failWith === 'plain')
          throw new Error(`connection to postgres://admin:hunter2@db failed for ${request.text}`);
        if (request.failWith === 'no-issues') throw new ApiError('not_found');
        return {};
      },
    });
  });
  afterAll(() => fixture.close());

  it('an ApiError comes out of the client with the same code, message, param, issues and extra', async () => {
    const error = await fixture.client.echo({ failWith: 'exact' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    const received = error as ApiError;
    expect(received.code).toBe(thrown.code);
    expect(received.status).toBe(403);
    expect(received.message).toBe(thrown.message);
    expect(received.param).toBe(thrown.param);
    expect(received.issues).toEqual(thrown.issues);
    expect(received.extra).toEqual(thrown.extra);
  });

  it('an ApiError without param or issues comes back without them', async () => {
    const received = (await fixture.client.echo({ failWith: 'no-issues' }).catch((e: unknown) => e)) as ApiError;
    expect(received.code).toBe('not_found');
    expect(received.message).toBe(errorSpec('not_found').message);
    expect(received.param).toBeUndefined();
    expect(received.issues).toBeUndefined();
    expect(received.extra).toEqual({});
  });

  it(
    'an unknown failure becomes internal_error without its message, logged once with the request id and no request ' +
      'data',
    async () => {
      fixture.logs.length = 0;
      const error = await fixture.client
        .echo({ failWith: 'plain', text: 'prompt-text-42' }, { requestId: 'req_leak' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('internal_error');
      expect((error as ApiError).message).toBe(errorSpec('internal_error').message);
      expect(JSON.stringify(error)).not.toContain('hunter2');
      expect((error as ApiError).message).not.toContain('hunter2');

      const errors = fixture.logs.filter((line) => line.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        requestId: 'req_leak',
        rpc: '/sbc.rpctest.v1.EchoService/Echo',
        code: 'internal_error',
      });
      expect(JSON.stringify(fixture.logs)).not.toContain('"prompt-text-42"');
    },
  );

  it("a caller's mistake (4xx) is not logged as a server failure", async () => {
    fixture.logs.length = 0;
    await expect(fixture.client.echo({ failWith: 'exact' })).rejects.toBeInstanceOf(ApiError);
    expect(fixture.logs.filter((line) => (line.level as number) >= 50)).toHaveLength(0);
  });
});

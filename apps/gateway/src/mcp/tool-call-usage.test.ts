import { create } from '@bufbuild/protobuf';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { EgressDeniedError } from '@sbc/egress';
import { CallerKeySchema } from '@sbc/proto/sbc/account/v1/account_pb';
import type { Principal } from '../auth/authenticator';
import { toolCallFailure, toolCallUsage } from './tool-call-usage';

const teamKey: Principal = {
  kind: 'key',
  userId: 'usr_holder',
  key: create(CallerKeySchema, { id: 'key_1', name: 'agent key', orgId: 'org_1', route: 'auto' }),
  scopes: ['gateway:invoke'],
  revoked: false,
  operator: false,
};

describe('a tool call’s usage row', () => {
  it('names the tool as <server>__<tool>, the server as mcp:<server>, and charges nothing', () => {
    const fields = toolCallUsage(
      {
        context: { principal: teamKey, requestId: 'req_1' },
        server: 'everything',
        tool: 'get-sum',
        status: 200,
        startedAt: 1_000,
      },
      1_250,
      1_700_000_000_000,
    );
    expect(fields).toMatchObject({
      requestId: 'req_1',
      accountId: 'usr_holder',
      keyId: 'key_1',
      orgId: 'org_1',
      keyLabel: 'agent key',
      model: 'everything__get-sum',
      upstreamModel: 'get-sum',
      servedBy: 'mcp:everything',
      upstream: 'mcp:everything',
      dialectIn: 'mcp',
      status: 200,
      latencyMs: 250n,
      creditsChargedMicrocredits: 0n,
      listCostNanoUsd: 0n,
      inputTokens: 0n,
      isByok: true,
      atMs: 1_700_000_000_000,
    });
  });
});

describe('a failed tool call as the caller is told', () => {
  it('a server that did not answer in time is 504, said so', () => {
    const failure = toolCallFailure('slow', new McpError(ErrorCode.RequestTimeout, 'Request timed out'));
    expect(failure).toEqual({ status: 504, message: 'The tool server "slow" did not answer in time.' });
  });

  it('an HTTP failure names the status and never what the server sent', () => {
    const failure = toolCallFailure('db', new StreamableHTTPError(500, 'Error POSTing: <html>internal-secret</html>'));
    expect(failure.status).toBe(502);
    expect(failure.message).toBe('The tool server "db" answered HTTP 500.');
  });

  it('an address the egress rules refuse is said to be one, found through the fetch error’s causes', () => {
    const refused = new TypeError('fetch failed', { cause: new EgressDeniedError('169.254.169.254 is link-local') });
    expect(toolCallFailure('meta', refused)).toEqual({
      status: 502,
      message: 'The tool server "meta" is at an address this gateway may not dial.',
    });
  });

  it('anything else is a server that could not be reached, without its detail', () => {
    const failure = toolCallFailure(
      'gone',
      new TypeError('fetch failed', { cause: new Error('ECONNREFUSED 10.0.0.7') }),
    );
    expect(failure).toEqual({ status: 502, message: 'The tool server "gone" could not be reached.' });
  });
});

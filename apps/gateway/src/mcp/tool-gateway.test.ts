import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createEgressPolicy } from '@sbc/egress';
import { ApiError } from '@sbc/errors';
import { createLogger } from '@sbc/logging';
import { memoryTargetHealth } from '@sbc/route-health';
import type { Principal } from '../auth/authenticator';
import { McpSessions } from './mcp-sessions';
import type { ToolCallRecord } from './tool-call-usage';
import { createToolGatewaySession } from './tool-gateway';
import type { McpToolServer } from './tool-server-source';
import { serveSessions } from './test-support';
import { createUpstreamDialer } from './upstream-tools';

const logger = createLogger({ service: 'tool-gateway-test', level: 'silent' });
const principal = { kind: 'session', userId: 'usr_1', session: 'ses_1', scopes: 'unrestricted' } as Principal;
/** A server on a loopback port nothing listens on: a call that gets as far as dialing it fails, 502. */
const server: McpToolServer = {
  slug: 'files',
  label: 'Files',
  url: 'http://127.0.0.1:9/mcp',
  headers: {},
  source: 'account',
  dialAs: 'tenant',
};
const dialer = createUpstreamDialer(createEgressPolicy({ privateEgress: 'none', ownOrigins: () => [] }), {
  connectTimeoutMs: 1_000,
  callTimeoutMs: 1_000,
});

let refusal: ApiError | undefined;
const recorded: ToolCallRecord[] = [];
let sessions: McpSessions;
let http: Server;
let client: Client;

beforeEach(async () => {
  refusal = undefined;
  recorded.length = 0;
  const source = { serversFor: async () => [server] };
  sessions = new McpSessions({
    limits: { maxSessions: 10, idleMs: 60_000 },
    source,
    open: (slug) =>
      createToolGatewaySession(
        {
          source,
          dialer,
          logger,
          record: (call) => recorded.push(call),
          usageGate: { refusal: () => refusal },
          health: memoryTargetHealth(),
          version: '1',
        },
        slug,
      ),
    logger,
  });
  const served = await serveSessions(sessions, principal);
  http = served.http;
  client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
});

afterEach(async () => {
  await client.close();
  await sessions.closeAll();
  await new Promise((resolve) => http.close(resolve));
});

afterAll(() => dialer.close());

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');

describe('a tools/call while the edge cannot record usage', () => {
  it('is refused without dialing the tool server, said so, and recorded as 503', async () => {
    refusal = new ApiError('usage_unrecordable', 'This gateway cannot record usage right now.');
    const result = await client.callTool({ name: 'files__read', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('This gateway cannot record usage right now.');
    expect(recorded.map(({ server: slug, tool, status }) => ({ slug, tool, status }))).toEqual([
      { slug: 'files', tool: 'read', status: 503 },
    ]);
  });

  it('goes on to the tool server once usage can be recorded again', async () => {
    const result = await client.callTool({ name: 'files__read', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^The tool server "files" /);
    expect(recorded.map((call) => call.status)).toEqual([502]);
  });
});

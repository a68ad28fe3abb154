import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createEgressPolicy } from '@sbc/egress';
import { createLogger } from '@sbc/logging';
import { memoryTargetHealth } from '@sbc/route-health';
import type { Principal } from '../auth/authenticator';
import { McpSessions } from './mcp-sessions';
import { createToolGatewaySession } from './tool-gateway';
import { serveSessions } from './test-support';
import { createUpstreamDialer } from './upstream-tools';

const logger = createLogger({ service: 'mcp-sessions-test', level: 'silent' });
const principal = { kind: 'session', userId: 'usr_1', session: 'ses_1', scopes: 'unrestricted' } as Principal;

let clock = 0;
let sessions: McpSessions;
let http: Server;
let url = '';
const dialer = createUpstreamDialer(createEgressPolicy({ privateEgress: 'none', ownOrigins: () => [] }), {
  connectTimeoutMs: 1_000,
  callTimeoutMs: 1_000,
});

beforeEach(async () => {
  clock = 1_000_000;
  sessions = new McpSessions({
    limits: { maxSessions: 2, idleMs: 60_000 },
    // An account with no tool servers: these tests are about sessions, not tools.
    source: { serversFor: async () => [] },
    open: (slug) =>
      createToolGatewaySession(
        {
          source: { serversFor: async () => [] },
          dialer,
          logger,
          record: () => {},
          health: memoryTargetHealth(),
          version: '1',
        },
        slug,
      ),
    logger,
    now: () => clock,
  });
  ({ http, url } = await serveSessions(sessions, principal));
});

const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await sessions.closeAll();
  await new Promise((resolve) => http.close(resolve));
});

afterAll(() => dialer.close());

async function connect(): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

describe('MCP sessions on one edge', () => {
  it('past the limit, the least recently used session ends and its client is told the session is gone', async () => {
    const first = await connect();
    const second = await connect();
    clock += 10;
    await first.listTools(); // the first is now the more recently used
    const third = await connect();
    expect(sessions.size).toBe(2);
    await expect(second.listTools()).rejects.toThrow(/404|Session not found/);
    await expect(first.listTools()).resolves.toEqual({ tools: [] });
    await expect(third.listTools()).resolves.toEqual({ tools: [] });
  });

  it('a session idle past the limit ends; one in use stays', async () => {
    const idle = await connect();
    clock += 30_000;
    const busy = await connect();
    clock += 40_000;
    sessions.sweep();
    expect(sessions.size).toBe(1);
    await expect(idle.listTools()).rejects.toThrow(/404|Session not found/);
    await expect(busy.listTools()).resolves.toEqual({ tools: [] });
  });

  it('a request with no session that is not an initialize is refused, and makes none', async () => {
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(answer.status).toBe(400);
    expect(sessions.size).toBe(0);
  });

  it('DELETE ends a session', async () => {
    const client = await connect();
    expect(sessions.size).toBe(1);
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    expect(sessions.size).toBe(0);
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { freePort } from '@sbc/testing';
import { EVERYTHING_SERVER, startEverythingServer, type RunningMcpServer } from '../support/mcp-everything';
import { OWNER_KEY, startStack, type UsageStack } from '../support/stack';

/**
 * The gateway as an MCP server (docs/mcp.md), met by the official SDK's client, in front of a real
 * `@modelcontextprotocol/server-everything` on loopback: `/mcp` lists every tool of the key's servers as
 * `<server>__<tool>` and calls them, `/mcp/{slug}` serves one server under its own names, progress is relayed,
 * `allowed_tools` holds for listing and calling alike (and a change applies in an open session), another account's
 * servers are neither listed nor called, a silent or absent server is an MCP error result in bounded time, and every
 * tools/call is a usage row.
 */
const CALL_TIMEOUT_MS = 1_500;

let stack: UsageStack;
let everything: RunningMcpServer | undefined;
let everythingUrl = '';
let slug = '';
const clients: Client[] = [];

async function connect(path: string, key: string): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.edge.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** How a tool the key may not call is answered: as a tool that does not exist, in a tool error result. */
const unknownTool = (name: string) => ({ content: [{ type: 'text', text: `Unknown tool: ${name}` }], isError: true });

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

function rawMcp(path: string, headers: Record<string, string>, body: unknown = INITIALIZE) {
  return fetch(`${stack.edge.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

async function addServer(key: string, label: string, url: string): Promise<string> {
  const answer = await stack.api('POST', '/v1/mcp/servers', { key, body: { label, url } });
  expect(answer.status).toBe(201);
  return answer.body.server.slug as string;
}

async function usageRows(keyId: string, count: number, asKey = OWNER_KEY): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + 20_000;
  let rows: Array<Record<string, unknown>> = [];
  while (rows.length < count && Date.now() < deadline) {
    const page = await stack.api('GET', `/v1/usage/requests?key_id=${keyId}&limit=100`, { key: asKey });
    rows = page.body.data;
    if (rows.length < count) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return rows;
}

const describeMcp = EVERYTHING_SERVER.unavailable ? describe.skip : describe;
if (EVERYTHING_SERVER.unavailable) console.warn(`MCP gateway: skipped, ${EVERYTHING_SERVER.unavailable}`);

describeMcp('the MCP gateway', () => {
  beforeAll(async () => {
    everything = await startEverythingServer();
    everythingUrl = everything.url;
    stack = await startStack({
      label: 'mcp_gateway',
      ledger: {},
      // Test-only: tenants' tool servers on loopback, as the everything server is here.
      accountEnv: { EGRESS_PRIVATE: 'everyone' },
      edgeEnv: {
        EGRESS_PRIVATE: 'everyone',
        MCP_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
        MCP_CONNECT_TIMEOUT_MS: '3000',
      },
    });
    slug = await addServer(OWNER_KEY, 'everything', everythingUrl);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await stack?.stop();
    await everything?.stop();
  });

  it('a caller without a key is 401, and a key without gateway:invoke 403, before any session is made', async () => {
    const anonymous = await rawMcp('/mcp', {});
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: 'unauthorized' });
    expect(anonymous.headers.get('mcp-session-id')).toBeNull();

    const reader = await stack.seedKey({ scopes: ['usage:read'] });
    const refused = await rawMcp('/mcp', { 'x-api-key': reader.secret });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'insufficient_scope', required_scopes: ['gateway:invoke'] });
    expect(refused.headers.get('mcp-session-id')).toBeNull();
  });

  it('/mcp lists the key’s servers’ tools as <server>__<tool> and calls them through to the server', async () => {
    const client = await connect('/mcp', OWNER_KEY);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining([`${slug}__echo`, `${slug}__get-sum`]));
    expect(names.every((name) => name.startsWith(`${slug}__`))).toBe(true);
    // The server's own definitions travel with the new name.
    expect(tools.find((tool) => tool.name === `${slug}__get-sum`)?.inputSchema.properties).toHaveProperty('a');

    const sum = (await client.callTool({ name: `${slug}__get-sum`, arguments: { a: 2, b: 3 } })) as CallToolResult;
    expect(textOf(sum)).toContain('5');
    const echoed = (await client.callTool({
      name: `${slug}__echo`,
      arguments: { message: 'through the gateway' },
    })) as CallToolResult;
    expect(textOf(echoed)).toContain('through the gateway');
    // Each tool call counts among the edge's calls, as a model call does.
    const metrics = await (await fetch(`${stack.edge.url}/metrics`)).text();
    const counted = /sbc_model_calls_total\{[^}]*dialect="mcp"[^}]*status="200"[^}]*\} (\d+)/.exec(metrics);
    expect(Number(counted?.[1])).toBeGreaterThanOrEqual(2);
  });

  it('relays a tool’s progress to the caller', async () => {
    const client = await connect('/mcp', OWNER_KEY);
    const progress: number[] = [];
    const result = (await client.callTool(
      { name: `${slug}__trigger-long-running-operation`, arguments: { duration: 0.4, steps: 2 } },
      undefined,
      { onprogress: (update) => progress.push(update.progress) },
    )) as CallToolResult;
    expect(textOf(result)).toContain('completed');
    expect(progress).toEqual([1, 2]);
  });

  it('/mcp/{slug} serves one server’s tools under their own names', async () => {
    const client = await connect(`/mcp/${slug}`, OWNER_KEY);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    const echoed = (await client.callTool({
      name: 'echo',
      arguments: { message: 'by its own name' },
    })) as CallToolResult;
    expect(textOf(echoed)).toContain('by its own name');
  });

  it('/mcp/{slug} relays the server’s resources and prompts to keys that allowed_tools do not narrow', async () => {
    const open = await connect(`/mcp/${slug}`, OWNER_KEY);
    expect((await open.listResources()).resources.length).toBeGreaterThan(0);
    expect((await open.listPrompts()).prompts.length).toBeGreaterThan(0);

    const minted = await stack.api('POST', '/v1/keys', {
      key: OWNER_KEY,
      body: { name: 'echo tool only', scopes: ['gateway:invoke'], allowed_tools: [`${slug}__echo`] },
    });
    const narrowed = await connect(`/mcp/${slug}`, minted.body.key);
    await expect(narrowed.listResources()).rejects.toThrow(/allowed_tools limit it to tools/);
    expect((await narrowed.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
  });

  it('allowed_tools decide listing and calling alike, and a change applies to an open session', async () => {
    const minted = await stack.api('POST', '/v1/keys', {
      key: OWNER_KEY,
      body: { name: 'echo only', scopes: ['gateway:invoke'], allowed_tools: [`${slug}__echo`] },
    });
    expect(minted.status).toBe(201);
    const client = await connect('/mcp', minted.body.key);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([`${slug}__echo`]);
    expect(await client.callTool({ name: `${slug}__get-sum`, arguments: { a: 1, b: 1 } })).toEqual(
      unknownTool(`${slug}__get-sum`),
    );

    const patched = await stack.api('PATCH', `/v1/keys/${minted.body.id}`, {
      key: OWNER_KEY,
      body: { allowed_tools: [`${slug}__get-sum`] },
    });
    expect(patched.status).toBe(200);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([`${slug}__get-sum`]);
    const sum = (await client.callTool({ name: `${slug}__get-sum`, arguments: { a: 4, b: 4 } })) as CallToolResult;
    expect(textOf(sum)).toContain('8');
    expect(await client.callTool({ name: `${slug}__echo`, arguments: { message: 'x' } })).toEqual(
      unknownTool(`${slug}__echo`),
    );

    const rows = await usageRows(minted.body.id, 1);
    expect(rows).toEqual([
      expect.objectContaining({ model: `${slug}__get-sum`, status: 200, served_by: `mcp:${slug}`, credits_charged: 0 }),
    ]);
  });

  it('another account never lists nor calls the owner’s servers, and its slug is 404 to it', async () => {
    const stranger = await stack.seedKey({ userId: await stack.seedUser(), scopes: ['gateway:invoke'] });
    const client = await connect('/mcp', stranger.secret);
    expect((await client.listTools()).tools).toEqual([]);
    expect(await client.callTool({ name: `${slug}__echo`, arguments: { message: 'x' } })).toEqual(
      unknownTool(`${slug}__echo`),
    );

    const bySlug = await rawMcp(`/mcp/${slug}`, { authorization: `Bearer ${stranger.secret}` });
    expect(bySlug.status).toBe(404);
    expect(await bySlug.json()).toMatchObject({ error: 'not_found' });

    // Nor can it ride on a session the owner opened.
    const owners = await connect('/mcp', OWNER_KEY);
    const sessionId = (owners.transport as StreamableHTTPClientTransport).sessionId!;
    const hijack = await rawMcp(
      '/mcp',
      { authorization: `Bearer ${stranger.secret}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    );
    expect(hijack.status).toBe(404);
  });

  it('a silent tool server is an MCP error result within the call timeout, and a usage row', async () => {
    const key = await stack.seedKey({ scopes: ['gateway:invoke'] });
    const client = await connect('/mcp', key.secret);
    const started = Date.now();
    const result = (await client.callTool({
      name: `${slug}__trigger-long-running-operation`,
      arguments: { duration: 10, steps: 1 },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`The tool server "${slug}" did not answer in time.`);
    expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_MS + 2_000);

    const rows = await usageRows(key.id, 1);
    expect(rows[0]).toMatchObject({ model: `${slug}__trigger-long-running-operation`, status: 504 });
  });

  it('a server nobody answers for is left out of /mcp, and calling it is an MCP error result', async () => {
    const user = await stack.seedUser();
    const key = await stack.seedKey({ userId: user, scopes: ['gateway:invoke', 'endpoints:write', 'usage:read'] });
    await addServer(key.secret, 'everything', everythingUrl);
    const dead = await addServer(key.secret, 'gone', `http://127.0.0.1:${await freePort()}/mcp`);
    const client = await connect('/mcp', key.secret);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('everything__echo');
    expect(names.some((name) => name.startsWith(`${dead}__`))).toBe(false);
    const result = (await client.callTool({ name: `${dead}__echo`, arguments: {} })) as CallToolResult;
    expect(result).toMatchObject({ isError: true });
    expect(textOf(result)).toBe(`The tool server "${dead}" could not be reached.`);

    // Three failures in a row cool it down, as a model target: it gets one half-open call, and the next call is
    // refused without dialing it.
    for (let i = 0; i < 3; i++) await client.callTool({ name: `${dead}__echo`, arguments: {} });
    const cooled = (await client.callTool({ name: `${dead}__echo`, arguments: {} })) as CallToolResult;
    expect(textOf(cooled)).toMatch(new RegExp(`^The tool server "${dead}" failed repeatedly: retry in \\d+ s\\.$`));
    // Another server of the same account is not touched.
    expect(
      textOf((await client.callTool({ name: 'everything__echo', arguments: { message: 'still' } })) as CallToolResult),
    ).toContain('still');
    const rows = await usageRows(key.id, 6, key.secret);
    expect(rows.map((row) => row.status)).toEqual([200, 503, 502, 502, 502, 502]);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { newId } from '@sbc/ids';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { createRpcClient } from '@sbc/rpc';
import { freePort } from '@sbc/testing';
import { EVERYTHING_SERVER, startEverythingServer, type RunningMcpServer } from '../support/mcp-everything';
import {
  anthropicFor,
  openAiFor,
  OWNER_KEY,
  simHouse,
  startStack,
  type RunsStack,
  type UsageStack,
} from '../support/stack';

/**
 * Remote MCP tools inside model calls (docs/mcp.md "MCP tools in model calls"), met by the official SDKs: a
 * Responses `mcp` tool and a Messages `mcp_servers` entry that name the caller's registered tool server (a real
 * `@modelcontextprotocol/server-everything` on loopback) are run by the gateway. The simulator calls the tool the
 * prompt names (`sim:call:`), the gateway runs it on the server and calls the model again with its result; the
 * caller gets the tool's output in the provider's items, the final text, usage summed over the rounds, and a usage
 * row for each round and for the tool call. A URL that is not a registered server is refused without a connection,
 * another account's server is not found, and a key's allowed_tools hold as they do at /mcp.
 */

let stack: UsageStack & RunsStack;
let everything: RunningMcpServer | undefined;
let slug = '';

type Row = Record<string, unknown>;

async function usageRows(keyId: string, count: number, asKey = OWNER_KEY): Promise<Row[]> {
  const deadline = Date.now() + 20_000;
  let rows: Row[] = [];
  while (rows.length < count && Date.now() < deadline) {
    const page = await stack.api('GET', `/v1/usage/requests?key_id=${keyId}&limit=100`, { key: asKey });
    rows = page.body.data;
    if (rows.length < count) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return rows;
}

/** A key of the owner's account with `gateway:invoke`, and clients of both SDKs for it. */
async function caller(allowedTools?: string[]) {
  const body: Record<string, unknown> = { name: 'mcp in calls', scopes: ['gateway:invoke'] };
  if (allowedTools) body.allowed_tools = allowedTools;
  const minted = await stack.api('POST', '/v1/keys', { key: OWNER_KEY, body });
  expect(minted.status).toBe(201);
  const secret = minted.body.key as string;
  return {
    id: minted.body.id as string,
    secret,
    openai: openAiFor(stack.edge.url, secret),
    anthropic: anthropicFor(stack.edge.url, secret),
  };
}

const echoCall = (message: string) => `sim:call:${slug}__echo ${JSON.stringify({ message })}`;

type OutputItem = OpenAI.Responses.ResponseOutputItem;
const ofType = <T extends OutputItem['type']>(items: OutputItem[], type: T) =>
  items.filter((item): item is Extract<OutputItem, { type: T }> => item.type === type);

const describeMcp = EVERYTHING_SERVER.unavailable ? describe.skip : describe;
if (EVERYTHING_SERVER.unavailable) console.warn(`MCP tools in model calls: skipped, ${EVERYTHING_SERVER.unavailable}`);

describeMcp('MCP tools in model calls', () => {
  beforeAll(async () => {
    everything = await startEverythingServer();
    stack = await startStack({
      label: 'mcp_in_calls',
      ledger: {},
      // Stored Responses (`store` is true unless said otherwise) are kept in the runs service.
      runs: { env: { RUNS_WORKERS: '0' } },
      // `house` speaks OpenAI chat to the sim, `house-omni` Anthropic Messages: both are translated here.
      house: (simUrl) => simHouse(simUrl),
      // Test-only: tenants' tool servers on loopback, as the everything server is here.
      accountEnv: { EGRESS_PRIVATE: 'everyone' },
      edgeEnv: { EGRESS_PRIVATE: 'everyone' },
    });
    const added = await stack.api('POST', '/v1/mcp/servers', {
      key: OWNER_KEY,
      body: { label: 'everything', url: everything.url },
    });
    expect(added.status).toBe(201);
    slug = added.body.server.slug;
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await everything?.stop();
  });

  it('the OpenAI SDK: an mcp tool runs on the server, its output an mcp_call item, then the answer', async () => {
    const { id, openai } = await caller();
    const reply = await openai.responses.create({
      model: 'house',
      input: echoCall('hello from a model call'),
      store: false,
      tools: [{ type: 'mcp', server_label: slug, require_approval: 'never' }],
    });

    const listed = ofType(reply.output, 'mcp_list_tools');
    expect(listed).toHaveLength(1);
    expect(listed[0]!.server_label).toBe(slug);
    expect(listed[0]!.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    const calls = ofType(reply.output, 'mcp_call');
    expect(calls).toEqual([
      expect.objectContaining({
        server_label: slug,
        name: 'echo',
        arguments: JSON.stringify({ message: 'hello from a model call' }),
        output: 'Echo: hello from a model call',
        error: null,
      }),
    ]);
    // The model's second round read the tool's result.
    expect(reply.output.at(-1)).toMatchObject({ type: 'message' });
    expect(reply.output_text).toContain('Echo: hello from a model call');
    expect(reply.status).toBe('completed');

    // One usage row per round and one for the tool call, all of the same request; the reply's usage is the rounds'.
    const rows = await usageRows(id, 3);
    expect(rows).toHaveLength(3);
    const rounds = rows.filter((row) => row.model === 'house');
    expect(rounds).toHaveLength(2);
    expect(rows).toContainEqual(
      expect.objectContaining({ model: `${slug}__echo`, status: 200, served_by: `mcp:${slug}`, credits_charged: 0 }),
    );
    expect(new Set(rows.map((row) => row.request_id)).size).toBe(1);
    const prompt = rounds.reduce((sum, row) => sum + Number(row.native_tokens_prompt), 0);
    expect(reply.usage?.input_tokens).toBe(prompt);
    expect(rounds.every((row) => Number(row.credits_charged) > 0)).toBe(true);
  });

  it('a stored response keeps the mcp items as the caller saw them, and can be continued', async () => {
    const { openai } = await caller();
    const tools: OpenAI.Responses.Tool[] = [{ type: 'mcp', server_label: slug }];
    const first = await openai.responses.create({ model: 'house', input: echoCall('kept'), tools });
    const kept = await openai.responses.retrieve(first.id);
    expect(kept.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(ofType(kept.output, 'mcp_call')[0]).toMatchObject({ output: 'Echo: kept' });

    const next = await openai.responses.create({
      model: 'house',
      previous_response_id: first.id,
      input: 'Thanks.',
      tools,
    });
    expect(next.status).toBe('completed');
    expect(next.output_text).toContain('Thanks.');
  });

  it('a call to one of the caller’s own functions ends the rounds: it is the caller’s to answer', async () => {
    const { openai } = await caller();
    const reply = await openai.responses.create({
      model: 'house',
      input: 'sim:call:lookup {"query":"acme"}',
      store: false,
      tools: [
        {
          type: 'function',
          name: 'lookup',
          parameters: { type: 'object', properties: { query: { type: 'string' } } },
          strict: false,
        },
        { type: 'mcp', server_label: slug },
      ],
    });
    expect(reply.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'function_call']);
    expect(reply.output[1]).toMatchObject({ name: 'lookup', arguments: '{"query":"acme"}' });
  });

  it('the OpenAI SDK streamed: the mcp items are output items of their own before the answer', async () => {
    const { openai } = await caller();
    const stream = await openai.responses.create({
      model: 'house',
      input: echoCall('streamed'),
      store: false,
      stream: true,
      tools: [{ type: 'mcp', server_label: slug }],
    });
    const added: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_item.added') added.push(event.item.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(added).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(ofType(completed!.output, 'mcp_call')[0]).toMatchObject({ name: 'echo', output: 'Echo: streamed' });
    expect(completed!.output_text ?? JSON.stringify(completed!.output)).toContain('Echo: streamed');
  });

  it('the Anthropic SDK: an mcp_servers entry runs the tool, shown as mcp_tool_use and mcp_tool_result', async () => {
    const { id, anthropic } = await caller();
    for (const model of ['house', 'house-omni']) {
      const reply = await anthropic.beta.messages.create({
        model,
        max_tokens: 256,
        messages: [{ role: 'user', content: echoCall(`via ${model}`) }],
        mcp_servers: [{ type: 'url', url: everything!.url, name: 'tools' }],
        betas: ['mcp-client-2025-04-04'],
      });
      const [use, result, ...rest] = reply.content;
      expect(use).toMatchObject({
        type: 'mcp_tool_use',
        name: 'echo',
        server_name: 'tools',
        input: { message: `via ${model}` },
      });
      expect(result).toMatchObject({
        type: 'mcp_tool_result',
        tool_use_id: (use as Anthropic.Beta.BetaMCPToolUseBlock).id,
        is_error: false,
        content: [{ type: 'text', text: `Echo: via ${model}` }],
      });
      expect(rest).toEqual([
        expect.objectContaining({ type: 'text', text: expect.stringContaining(`Echo: via ${model}`) }),
      ]);
      expect(reply.stop_reason).toBe('end_turn');
    }
    const rows = await usageRows(id, 6);
    expect(rows.filter((row) => row.model === `${slug}__echo`)).toHaveLength(2);
  });

  it('the Anthropic SDK streamed: the MCP blocks come whole, before the text', async () => {
    const { anthropic } = await caller();
    const stream = anthropic.beta.messages.stream({
      model: 'house',
      max_tokens: 256,
      messages: [{ role: 'user', content: echoCall('streamed blocks') }],
      mcp_servers: [{ type: 'url', url: everything!.url, name: 'tools' }],
      betas: ['mcp-client-2025-04-04'],
    });
    const message = await stream.finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['mcp_tool_use', 'mcp_tool_result', 'text']);
    expect(message.content[1]).toMatchObject({ content: [{ type: 'text', text: 'Echo: streamed blocks' }] });
  });

  it('past MCP_MAX_TOOL_ROUNDS the last reply is the answer, its tool calls shown as not run', async () => {
    const edge = await stack.startEdge(simHouse(stack.sim.url), { MCP_MAX_TOOL_ROUNDS: '1' });
    const { id, secret } = await caller();
    const { data: reply, response } = await openAiFor(edge.url, secret)
      .responses.create({
        model: 'house',
        input: echoCall('one round only'),
        store: false,
        tools: [{ type: 'mcp', server_label: slug }],
      })
      .withResponse();
    expect(response.headers.get('x-sbc-mcp-rounds')).toBe('1');
    expect(ofType(reply.output, 'mcp_call')).toEqual([
      expect.objectContaining({
        name: 'echo',
        output: null,
        error: "Not run: the request reached the gateway's bound of 1 model calls.",
      }),
    ]);
    const rows = await usageRows(id, 1);
    expect(rows.map((row) => row.model)).toEqual(['house']);
  });

  it('a URL that is not a registered tool server is a 400, and the gateway never connects to it', async () => {
    let connections = 0;
    const bait: Server = createServer((_req, res) => res.end());
    bait.on('connection', () => connections++);
    await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(bait.address() as AddressInfo).port}/mcp`;
    try {
      const { openai, anthropic } = await caller();
      const responses = openai.responses.create({
        model: 'house',
        input: 'sim:tool',
        store: false,
        tools: [{ type: 'mcp', server_label: 'bait', server_url: url }],
      });
      await expect(responses).rejects.toMatchObject({
        status: 400,
        error: { type: 'invalid_request_error', param: 'tools.0.server_url' },
      });
      const messages = anthropic.beta.messages.create({
        model: 'house',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'sim:tool' }],
        mcp_servers: [{ type: 'url', url, name: 'bait' }],
        betas: ['mcp-client-2025-04-04'],
      });
      await expect(messages).rejects.toMatchObject({
        status: 400,
        error: { error: { type: 'invalid_request_error', message: expect.stringContaining('mcp_servers.0.url') } },
      });
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => bait.close(resolve));
    }
  });

  it('a tool server that cannot be listed fails the call (502) before any model call', async () => {
    const user = await stack.seedUser();
    const key = await stack.seedKey({ userId: user, scopes: ['gateway:invoke', 'endpoints:write', 'usage:read'] });
    const dead = await stack.api('POST', '/v1/mcp/servers', {
      key: key.secret,
      body: { label: 'gone', url: `http://127.0.0.1:${await freePort()}/mcp` },
    });
    expect(dead.status).toBe(201);
    const reply = openAiFor(stack.edge.url, key.secret).responses.create({
      model: 'house',
      input: 'sim:tool',
      store: false,
      tools: [{ type: 'mcp', server_label: dead.body.server.slug }],
    });
    await expect(reply).rejects.toMatchObject({
      status: 502,
      error: { message: `The tool server "${dead.body.server.slug}" could not be reached.` },
    });
    const rows = await usageRows(key.id, 1, key.secret);
    expect(rows).toEqual([expect.objectContaining({ status: 502, attempts: 0, credits_charged: 0 })]);
  });

  it('another account’s server is not found by its label nor by its URL', async () => {
    const stranger = await stack.seedKey({ userId: await stack.seedUser(), scopes: ['gateway:invoke'] });
    const openai = openAiFor(stack.edge.url, stranger.secret);
    for (const tool of [
      { type: 'mcp' as const, server_label: slug },
      { type: 'mcp' as const, server_label: 'mine', server_url: everything!.url },
    ]) {
      await expect(
        openai.responses.create({ model: 'house', input: echoCall('x'), store: false, tools: [tool] }),
      ).rejects.toMatchObject({ status: 400, error: { type: 'invalid_request_error' } });
    }
  });

  it('a key whose allowed_tools leave a tool out is not offered it, and the tool never runs', async () => {
    const { id, openai } = await caller([`${slug}__get-sum`]);
    const reply = await openai.responses.create({
      model: 'house',
      input: echoCall('not for this key'),
      store: false,
      tools: [{ type: 'mcp', server_label: slug }],
    });
    expect(ofType(reply.output, 'mcp_list_tools')[0]!.tools.map((tool) => tool.name)).toEqual(['get-sum']);
    expect(ofType(reply.output, 'mcp_call')).toEqual([]);
    expect(reply.output_text).not.toContain('Echo:');
    const rows = await usageRows(id, 1);
    expect(rows.map((row) => row.model)).toEqual(['house']);
  });

  it('the request’s own allowed_tools narrow the server’s tools further', async () => {
    const { openai } = await caller();
    const reply = await openai.responses.create({
      model: 'house',
      input: echoCall('narrowed'),
      store: false,
      tools: [{ type: 'mcp', server_label: slug, allowed_tools: ['get-sum'] }],
    });
    expect(ofType(reply.output, 'mcp_list_tools')[0]!.tools.map((tool) => tool.name)).toEqual(['get-sum']);
    expect(ofType(reply.output, 'mcp_call')).toEqual([]);
  });

  it('require_approval "always" is refused: the gateway cannot pause a call for approval', async () => {
    const { openai } = await caller();
    await expect(
      openai.responses.create({
        model: 'house',
        input: echoCall('x'),
        store: false,
        tools: [{ type: 'mcp', server_label: slug, require_approval: 'always' }],
      }),
    ).rejects.toMatchObject({ status: 400, error: { param: 'tools.0.require_approval' } });
  });

  it('a batch line called again (its settle lost to a crash) bills each round and tool call once', async () => {
    // A key as the batch lane mints one (CreateKey naming its batch), and a line of that batch.
    const accountRpc = createRpcClient(AccountService, { target: stack.account.grpcAddress, deadlineMs: 10_000 });
    const ulid = newId('req').slice('req_'.length);
    const minted = await accountRpc.createKey({
      caller: { userId: stack.ownerId },
      name: `batch batch_${ulid}`,
      scopes: ['gateway:invoke'],
      route: 'auto',
      mode: 'agent',
      batchId: `batch_${ulid}`,
    });
    accountRpc.close();
    const line = `batch_req_${ulid}_1`;
    const call = (requestId: string) =>
      stack.api('POST', '/v1/responses', {
        key: minted.secret,
        headers: { 'x-request-id': requestId },
        body: { model: 'house', input: echoCall('once'), store: false, tools: [{ type: 'mcp', server_label: slug }] },
      });
    const first = await call(line);
    const again = await call(line);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(first.headers.get('x-sbc-mcp-rounds')).toBe('2');
    // A later call of the key: once its row is in, the ledger has applied (or dropped) every event of the line.
    const later = newId('req');
    expect((await call(later)).status).toBe(200);
    const keyId = minted.key!.id;
    const deadline = Date.now() + 20_000;
    let rows: Row[] = [];
    while (!rows.some((row) => row.request_id === later) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      rows = (await stack.api('GET', `/v1/usage/requests?key_id=${keyId}&limit=100`, { key: OWNER_KEY })).body.data;
    }
    const billed = rows.filter((row) => row.request_id === line);
    // The first round, its tool call and the last round: one row each, though the line ran twice.
    expect(billed.map((row) => row.id).sort()).toEqual([line, `${line}_r1`, `${line}_r1_t0`].sort());
    expect(billed.find((row) => row.id === `${line}_r1_t0`)).toMatchObject({ model: `${slug}__echo`, status: 200 });
    // The later call, not a line of the batch, has event ids of the edge's own.
    for (const row of rows.filter((row) => row.request_id === later)) expect(row.id).toMatch(/^evt_/);
  });
});

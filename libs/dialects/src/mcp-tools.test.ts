import type { ChatResponse, McpItem, SseFrame, StreamEvent } from './ir';
import { MESSAGES } from './messages/adapter';
import { parseMessagesRequest } from './messages/parse-request';
import { renderMessagesResponse } from './messages/render-response';
import { createMessagesStreamRenderer } from './messages/stream-renderer';
import { DialectRequestError } from './request-error';
import { RESPONSES } from './responses/adapter';
import { parseResponsesRequest } from './responses/parse-request';
import { renderResponsesResponse } from './responses/render-response';
import { createResponsesStreamRenderer } from './responses/stream-renderer';

function issuesOf(parse: () => unknown): DialectRequestError['issues'] {
  try {
    parse();
  } catch (error) {
    if (error instanceof DialectRequestError) return error.issues;
  }
  throw new Error('expected a DialectRequestError');
}

const FUNCTION = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } };

describe('remote MCP tools in a request', () => {
  it('a Responses mcp tool is a tool set for the gateway to run, beside the functions, and nothing is dropped', () => {
    const request = parseResponsesRequest({
      model: 'm',
      input: 'x',
      tools: [
        FUNCTION,
        {
          type: 'mcp',
          server_label: 'github',
          server_url: 'https://mcp.example.com/mcp',
          allowed_tools: ['search'],
          require_approval: 'never',
          headers: { authorization: 'Bearer caller-secret' },
        },
        { type: 'mcp', server_label: 'everything', allowed_tools: { tool_names: ['echo'] } },
      ],
    });
    expect(request.tools?.map((tool) => tool.name)).toEqual(['lookup']);
    expect(request.mcp).toEqual([
      {
        label: 'github',
        url: 'https://mcp.example.com/mcp',
        allowedTools: ['search'],
        params: { label: 'tools.1.server_label', url: 'tools.1.server_url' },
      },
      {
        label: 'everything',
        allowedTools: ['echo'],
        params: { label: 'tools.2.server_label', url: 'tools.2.server_url' },
      },
    ]);
    expect(request.dropped).toEqual([]);
    // The caller's credentials for the server are never carried.
    expect(JSON.stringify(request)).not.toContain('caller-secret');
  });

  it('a Responses request without an mcp tool has no tool sets', () => {
    expect(parseResponsesRequest({ model: 'm', input: 'x', tools: [FUNCTION] }).mcp).toBeUndefined();
  });

  it('refuses what the gateway cannot honour: approval asked, connectors, a read-only filter, no label', () => {
    const issues = issuesOf(() =>
      parseResponsesRequest({
        model: 'm',
        input: 'x',
        tools: [
          { type: 'mcp', server_label: 'a', require_approval: 'always' },
          { type: 'mcp', server_label: 'b', require_approval: { always: { tool_names: ['rm'] } } },
          { type: 'mcp', server_label: 'c', connector_id: 'connector_gmail' },
          { type: 'mcp', server_label: 'd', allowed_tools: { read_only: true } },
          { type: 'mcp', server_url: 'https://mcp.example.com/mcp' },
        ],
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      'tools.0.require_approval',
      'tools.1.require_approval',
      'tools.2.connector_id',
      'tools.3.allowed_tools.read_only',
      'tools.4.server_label',
    ]);
  });

  it('require_approval "never", or never for some tools and always for none, is run', () => {
    const request = parseResponsesRequest({
      model: 'm',
      input: 'x',
      tools: [{ type: 'mcp', server_label: 'a', require_approval: { never: { tool_names: ['echo'] } } }],
    });
    expect(request.mcp).toHaveLength(1);
  });

  it('Messages mcp_servers are tool sets; one whose tools are disabled is left out; nothing is dropped', () => {
    const request = parseMessagesRequest({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
      mcp_servers: [
        {
          type: 'url',
          url: 'https://mcp.example.com/mcp',
          name: 'example',
          authorization_token: 'caller-secret',
          tool_configuration: { enabled: true, allowed_tools: ['echo'] },
        },
        { type: 'url', url: 'https://other.example.com/mcp', name: 'off', tool_configuration: { enabled: false } },
      ],
    });
    expect(request.mcp).toEqual([
      {
        label: 'example',
        url: 'https://mcp.example.com/mcp',
        allowedTools: ['echo'],
        params: { label: 'mcp_servers.0.name', url: 'mcp_servers.0.url' },
      },
    ]);
    expect(request.dropped).toEqual([]);
    expect(JSON.stringify(request)).not.toContain('caller-secret');
  });

  it('a Messages mcp_toolset tool narrows the server it names, and is no function', () => {
    const body = (toolsets: unknown[]) => ({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/mcp', name: 'example' }],
      tools: toolsets,
    });
    const some = parseMessagesRequest(
      body([{ type: 'mcp_toolset', mcp_server_name: 'example', configs: { rm: { enabled: false } } }]),
    );
    expect(some.tools).toEqual([]);
    expect(some.mcp).toEqual([expect.objectContaining({ label: 'example', excludedTools: ['rm'] })]);
    expect(some.dropped).toEqual([]);
    const only = parseMessagesRequest(
      body([
        {
          type: 'mcp_toolset',
          mcp_server_name: 'example',
          default_config: { enabled: false },
          configs: { echo: { enabled: true } },
        },
      ]),
    );
    expect(only.mcp).toEqual([expect.objectContaining({ allowedTools: ['echo'] })]);
    const none = parseMessagesRequest(
      body([{ type: 'mcp_toolset', mcp_server_name: 'example', default_config: { enabled: false } }]),
    );
    expect(none.mcp).toBeUndefined();
    const issues = issuesOf(() => parseMessagesRequest(body([{ type: 'mcp_toolset', mcp_server_name: 'other' }])));
    expect(issues.map((issue) => issue.path)).toEqual(['tools.0.mcp_server_name']);
  });

  it('refuses a Messages mcp_servers entry that is not a url server with a name', () => {
    const issues = issuesOf(() =>
      parseMessagesRequest({
        model: 'm',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
        mcp_servers: [{ type: 'stdio', url: 'https://x/mcp', name: 'a' }, { type: 'url', name: 'b' }, 'c'],
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual(['mcp_servers.0.type', 'mcp_servers.1.url', 'mcp_servers.2']);
  });

  it('the cheap check on the raw body sees an mcp tool or mcp_servers, and nothing else', () => {
    expect(RESPONSES.asksForMcp?.({ tools: [FUNCTION, { type: 'mcp', server_label: 'a' }] })).toBe(true);
    expect(RESPONSES.asksForMcp?.({ tools: [FUNCTION, { type: 'web_search' }] })).toBe(false);
    expect(RESPONSES.asksForMcp?.({})).toBe(false);
    expect(MESSAGES.asksForMcp?.({ mcp_servers: [{ type: 'url' }] })).toBe(true);
    expect(MESSAGES.asksForMcp?.({ mcp_servers: [] })).toBe(false);
    expect(MESSAGES.asksForMcp?.({ tools: [] })).toBe(false);
  });
});

const ITEMS: McpItem[] = [
  {
    type: 'mcp_list_tools',
    serverLabel: 'everything',
    tools: [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' } }],
  },
  {
    type: 'mcp_call',
    serverLabel: 'everything',
    name: 'echo',
    arguments: '{"message":"hi"}',
    output: 'Echo: hi',
    isError: false,
  },
  { type: 'mcp_call', serverLabel: 'everything', name: 'boom', arguments: '{}', output: 'It failed.', isError: true },
];

const REPLY: ChatResponse = {
  id: 'r1',
  model: 'house',
  created: 1,
  content: [{ type: 'text', text: 'Done.' }],
  stopReason: 'end_turn',
  usage: { inputTokens: 30, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 },
  mcp: ITEMS,
};

const EVENTS: StreamEvent[] = [
  { type: 'start', id: 'r1', model: 'house', created: 1 },
  ...ITEMS.map((item): StreamEvent => ({ type: 'mcp', item })),
  { type: 'text', text: 'Done.' },
  { type: 'usage', usage: REPLY.usage },
  { type: 'stop', reason: 'end_turn' },
  { type: 'end' },
];

const payloads = (frames: SseFrame[]) => frames.map((frame) => JSON.parse(frame.data) as Record<string, any>);

describe('what the gateway ran, in the reply', () => {
  it('Responses: mcp_list_tools and mcp_call items come before the message', () => {
    const body = renderResponsesResponse(REPLY) as { output: Array<Record<string, unknown>> };
    expect(body.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'mcp_call', 'message']);
    expect(body.output[0]).toMatchObject({
      server_label: 'everything',
      tools: [{ name: 'echo', description: 'Echoes', input_schema: { type: 'object' } }],
    });
    expect(body.output[1]).toMatchObject({
      server_label: 'everything',
      name: 'echo',
      arguments: '{"message":"hi"}',
      output: 'Echo: hi',
      error: null,
    });
    expect(body.output[2]).toMatchObject({ name: 'boom', output: null, error: 'It failed.' });
  });

  it('Responses: the mcp tools are echoed as the gateway ran them, without the credentials the caller sent', () => {
    const request = parseResponsesRequest({
      model: 'm',
      input: 'x',
      tools: [
        FUNCTION,
        { type: 'mcp', server_label: 'everything', headers: { authorization: 'Bearer caller-secret' } },
      ],
    });
    const body = renderResponsesResponse(REPLY, request) as { tools: unknown[] };
    expect(body.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'lookup' }),
      { type: 'mcp', server_label: 'everything', server_url: null, allowed_tools: null, require_approval: 'never' },
    ]);
  });

  it('Responses stream: each mcp item is an output item of its own, indexed before the message', () => {
    const renderer = createResponsesStreamRenderer({ model: 'house' });
    const events = payloads(EVENTS.flatMap((event) => renderer.render(event)));
    const added = events.filter((event) => event.type === 'response.output_item.added');
    expect(added.map((event) => [event.output_index, event.item.type])).toEqual([
      [0, 'mcp_list_tools'],
      [1, 'mcp_call'],
      [2, 'mcp_call'],
      [3, 'message'],
    ]);
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['response.mcp_call.completed', 'response.mcp_call.failed']),
    );
    const completed = events.at(-1)!;
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output.map((item: { type: string }) => item.type)).toEqual([
      'mcp_list_tools',
      'mcp_call',
      'mcp_call',
      'message',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
  });

  it('Messages: each call is an mcp_tool_use and its mcp_tool_result, before the text', () => {
    const body = renderMessagesResponse(REPLY) as { content: Array<Record<string, any>>; stop_reason: string };
    expect(body.content.map((block) => block.type)).toEqual([
      'mcp_tool_use',
      'mcp_tool_result',
      'mcp_tool_use',
      'mcp_tool_result',
      'text',
    ]);
    expect(body.content[0]).toMatchObject({ name: 'echo', server_name: 'everything', input: { message: 'hi' } });
    expect(body.content[1]).toEqual({
      type: 'mcp_tool_result',
      tool_use_id: body.content[0]!.id,
      is_error: false,
      content: [{ type: 'text', text: 'Echo: hi' }],
    });
    expect(body.content[3]).toMatchObject({ tool_use_id: body.content[2]!.id, is_error: true });
    expect(body.stop_reason).toBe('end_turn');
  });

  it('Messages stream: the MCP blocks start whole and stop, with dense indices, before the text block', () => {
    const renderer = createMessagesStreamRenderer({ model: 'house' });
    const events = payloads(EVENTS.flatMap((event) => renderer.render(event)));
    const starts = events.filter((event) => event.type === 'content_block_start');
    expect(starts.map((event) => [event.index, event.content_block.type])).toEqual([
      [0, 'mcp_tool_use'],
      [1, 'mcp_tool_result'],
      [2, 'mcp_tool_use'],
      [3, 'mcp_tool_result'],
      [4, 'text'],
    ]);
    expect(events.filter((event) => event.type === 'content_block_stop').map((event) => event.index)).toEqual([
      0, 1, 2, 3, 4,
    ]);
  });
});

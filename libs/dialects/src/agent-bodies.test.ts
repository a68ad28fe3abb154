import claudeFirst from './__fixtures__/bodies/agents/claude-code-first-turn.json';
import claudeToolResult from './__fixtures__/bodies/agents/claude-code-tool-result.json';
import codexFirst from './__fixtures__/bodies/agents/codex-first-turn.json';
import codexNamespaceResult from './__fixtures__/bodies/agents/codex-namespace-result.json';
import { assembleResponses, received, responsesViolations } from './__fixtures__/streams/replay';
import { renderChatRequest } from './chat/render-request';
import { droppedForUpstream } from './dropped-fields';
import type { ChatRequest, ChatResponse, StreamEvent } from './ir';
import { parseMessagesRequest } from './messages/parse-request';
import { renderMessagesRequest } from './messages/render-request';
import { parseResponsesRequest } from './responses/parse-request';
import { renderResponsesResponse } from './responses/render-response';
import { createResponsesStreamRenderer } from './responses/stream-renderer';
import { ZERO_USAGE } from './usage';

/**
 * The bodies today's coding agents send (dialects.md §9), recorded from the real CLIs through a proxy with their
 * prose replaced by placeholders: Claude Code 2.1.332 in Messages, Codex 0.171.0 in Responses. Each parses,
 * renders for either upstream, and the calls that come back reach the CLI as it declared its tools.
 */

type Json = Record<string, any>;
const NAMESPACE = 'multi_agent_v1';
const asChat = (request: ChatRequest): Json => renderChatRequest(request, 'gpt-x');
const asAnthropic = (request: ChatRequest): Json => renderMessagesRequest(request, 'claude-x', { defaultMaxTokens: 1 });

describe('Claude Code 2.1.332 (Messages)', () => {
  it('parses its first turn: the system message after the user turn stays a system turn in place', () => {
    const request = parseMessagesRequest(claudeFirst.body);
    expect(request.messages.map((message) => message.role)).toEqual(['system', 'user', 'system']);
    expect(request.reasoning).toEqual({ mode: 'adaptive', effort: 'high' });
    expect(request.user).toBe(claudeFirst.body.metadata.user_id);
    expect(request.tools).toHaveLength(claudeFirst.body.tools.length);
    expect([...request.dropped].sort()).toEqual(
      ['cache_control', 'context_management', 'thinking.display', 'tools.*.defer_loading'].sort(),
    );
  });

  it('renders it for an OpenAI engine with the system message at its place and the effort as reasoning_effort', () => {
    const body = asChat(parseMessagesRequest(claudeToolResult.body));
    expect(body.messages.map((message: Json) => message.role)).toEqual([
      'system',
      'user',
      'system',
      'assistant',
      'tool',
    ]);
    expect(body.messages[2].content).toBe('[environment and instructions]');
    expect(body.reasoning_effort).toBe('high');
    expect(body.tools.map((tool: Json) => tool.function.name)).toEqual(
      claudeToolResult.body.tools.map((tool) => tool.name),
    );
  });

  it('sends every effort Anthropic knows to an OpenAI engine as the reasoning_effort of the same name', () => {
    // OpenAI's efforts (none … xhigh, max) hold all of Anthropic's (low … max), so none needs a nearer value.
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max']) {
      const body = { ...claudeFirst.body, output_config: { effort } };
      expect(asChat(parseMessagesRequest(body)).reasoning_effort).toBe(effort);
    }
  });

  it('renders it for an Anthropic engine it must translate to with the later system text as user text', () => {
    // Models before Opus 4.8 refuse a system role in messages, and the engine's generation is unknown here.
    const body = asAnthropic(parseMessagesRequest(claudeFirst.body));
    expect(body.messages.map((message: Json) => message.role)).toEqual(['user']);
    expect(body.messages[0].content.at(-1)).toEqual({ type: 'text', text: '[environment and instructions]' });
    expect(body.thinking).toEqual({ type: 'adaptive' });
    expect(body.output_config).toEqual({ effort: 'high' });
  });
});

describe('Codex 0.171.0 (Responses)', () => {
  it('offers its namespace tool as flat functions and drops only web_search among its tools', () => {
    const request = parseResponsesRequest(codexFirst.body);
    const names = request.tools!.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'exec_command',
        `${NAMESPACE}__spawn_agent`,
        `${NAMESPACE}__wait_agent`,
        `${NAMESPACE}__close_agent`,
      ]),
    );
    expect(request.tools!.find((tool) => tool.name === `${NAMESPACE}__wait_agent`)?.declared).toEqual({
      name: 'wait_agent',
      namespace: NAMESPACE,
      namespaceDescription: '[what multi_agent_v1 does]',
      kind: 'function',
    });
    expect(new Set(names).size).toBe(names.length);
    expect(request.dropped).toEqual(['tools.*[built-in]', 'prompt_cache_key', 'client_metadata']);
    expect(droppedForUpstream('responses', request, 'openai')).toEqual(['reasoning.summary']);
    for (const body of [asChat(request), asAnthropic(request)]) {
      const sent = body.tools.map((tool: Json) => tool.function?.name ?? tool.name);
      expect(sent).toEqual(names);
    }
  });

  it('sends a replayed namespaced call under the flat name its definition has', () => {
    const request = parseResponsesRequest(codexNamespaceResult.body);
    const assistant = request.messages.find((message) => message.role === 'assistant');
    expect(assistant?.content).toEqual([
      {
        type: 'tool_call',
        id: expect.any(String),
        name: `${NAMESPACE}__wait_agent`,
        arguments: '{"targets":["agent-x"],"timeout_ms":10000}',
      },
    ]);
    const chat = asChat(request);
    const call = chat.messages.find((message: Json) => message.tool_calls);
    expect(call.tool_calls[0].function.name).toBe(`${NAMESPACE}__wait_agent`);
    expect(chat.tools.some((tool: Json) => tool.function.name === `${NAMESPACE}__wait_agent`)).toBe(true);
  });

  const reply = (blocks: ChatResponse['content']): ChatResponse => ({
    id: 'up',
    model: 'house',
    created: 1,
    content: blocks,
    stopReason: 'tool_use',
    usage: ZERO_USAGE,
  });

  it('renders the call that comes back as a function_call with the function’s own name and its namespace', () => {
    const request = parseResponsesRequest(codexFirst.body);
    const body = renderResponsesResponse(
      reply([{ type: 'tool_call', id: 'call_1', name: `${NAMESPACE}__wait_agent`, arguments: '{"targets":[]}' }]),
      request,
    );
    expect(body.output).toEqual([
      {
        type: 'function_call',
        id: expect.stringMatching(/^fc_/),
        call_id: 'call_1',
        name: 'wait_agent',
        namespace: NAMESPACE,
        arguments: '{"targets":[]}',
        status: 'completed',
      },
    ]);
    const echoed = (body.tools as Json[]).find((tool) => tool.type === 'namespace');
    expect(echoed).toMatchObject({ name: NAMESPACE, description: '[what multi_agent_v1 does]' });
    expect(echoed!.tools.map((tool: Json) => tool.name)).toEqual(
      codexFirst.body.tools.find((tool) => tool.type === 'namespace')!.tools!.map((tool) => tool.name),
    );
  });

  it('streams it with the whole event grammar, the namespace on the added and the done item', () => {
    const request = parseResponsesRequest(codexFirst.body);
    const renderer = createResponsesStreamRenderer({ model: 'house', request });
    const events: StreamEvent[] = [
      { type: 'start', id: 'up', model: 'x', created: 1 },
      { type: 'text', text: 'Waiting.' },
      { type: 'tool_call', index: 0, id: 'call_1', name: `${NAMESPACE}__wait_agent` },
      { type: 'tool_arguments', index: 0, delta: '{"targets":' },
      { type: 'tool_arguments', index: 0, delta: '["a"]}' },
      { type: 'stop', reason: 'tool_use' },
      { type: 'end' },
    ];
    const frames = events.flatMap((event) => renderer.render(event));
    expect(responsesViolations(frames)).toEqual([]);
    expect(received(frames).map((frame) => frame.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const data = received(frames).map((frame) => JSON.parse(frame.data) as Json);
    expect(data[8]!.item).toEqual({
      id: expect.stringMatching(/^fc_/),
      type: 'function_call',
      status: 'in_progress',
      arguments: '',
      call_id: 'call_1',
      name: 'wait_agent',
      namespace: NAMESPACE,
    });
    expect(data[11]).toMatchObject({ name: 'wait_agent', arguments: '{"targets":["a"]}' });
    expect(assembleResponses(frames).items.at(-1)).toMatchObject({
      type: 'function_call',
      name: 'wait_agent',
      namespace: NAMESPACE,
      arguments: '{"targets":["a"]}',
      status: 'completed',
    });
  });
});

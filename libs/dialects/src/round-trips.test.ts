import messagesReply from './__fixtures__/bodies/messages-response-thinking.json';
import { parseChatRequest } from './chat/parse-request';
import { parseChatResponse } from './chat/parse-response';
import { renderChatRequest } from './chat/render-request';
import { renderChatResponse } from './chat/render-response';
import { parseMessagesRequest } from './messages/parse-request';
import { parseMessagesResponse } from './messages/parse-response';
import { renderMessagesRequest } from './messages/render-request';
import { renderMessagesResponse } from './messages/render-response';
import { parseResponsesRequest } from './responses/parse-request';
import { renderResponsesResponse } from './responses/render-response';
import { restoreToolNames } from './tool-names';

/** Multi-turn agent loops across dialects: what the caller replays must still be valid for the upstream. */

const options = { defaultMaxTokens: 8192 };
type Turn = { role: string; content: Array<Record<string, unknown>> };

describe('a Responses caller (Codex) on an Anthropic upstream', () => {
  it('gets its thinking signature back to Anthropic unchanged when it replays reasoning and calls', () => {
    const first = renderResponsesResponse(parseMessagesResponse(messagesReply));
    const output = first.output as Array<Record<string, unknown>>;
    const call = output.find((item) => item.type === 'function_call')!;
    const next = parseResponsesRequest({
      model: 'claude',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        ...output,
        { type: 'function_call_output', call_id: call.call_id, output: '18°C' },
      ],
      reasoning: { effort: 'medium' },
    });
    const body = renderMessagesRequest(next, 'claude-sonnet-4-5', options);
    const turns = body.messages as Turn[];
    expect(turns[1]!.content).toEqual([
      { type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: 'EuYBCkQYAiJAbQ8sig+/==' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: 'Checking the weather.' },
      { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(turns[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: [{ type: 'text', text: '18°C' }] },
    ]);
  });
});

describe('a chat caller on an Anthropic upstream', () => {
  it('replays reasoning_content that never reaches Anthropic as thinking, and tool ids that still pair', () => {
    const first = renderChatResponse(parseMessagesResponse(messagesReply));
    const message = (first.choices as Array<{ message: Record<string, unknown> }>)[0]!.message;
    const next = parseChatRequest({
      model: 'claude',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        message,
        { role: 'tool', tool_call_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: '18°C' },
      ],
    });
    const turns = renderMessagesRequest(next, 'claude-sonnet-4-5', options).messages as Turn[];
    expect(turns[1]!.content.map((block) => block.type)).toEqual(['text', 'tool_use']);
    expect(turns[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: turns[1]!.content[1]!.id });
  });
});

describe('a messages caller (Claude Code) on an OpenAI-compatible upstream', () => {
  it('sees tool ids made Anthropic-safe, and its replay of them still pairs call and result upstream', () => {
    const upstreamReply = {
      id: 'chatcmpl-1',
      created: 1,
      model: 'kimi-k2',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'functions.bash:0', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const shown = renderMessagesResponse(parseChatResponse(upstreamReply));
    const toolUse = (shown.content as Array<Record<string, unknown>>)[0]!;
    expect(toolUse.id).toBe('functions_bash_0');
    const next = parseMessagesRequest({
      model: 'kimi',
      max_tokens: 1000,
      messages: [
        { role: 'user', content: 'ls' },
        { role: 'assistant', content: shown.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'a.txt' }] },
      ],
    });
    const messages = renderChatRequest(next, 'kimi-k2').messages as Array<Record<string, unknown>>;
    expect(messages[1]!.tool_calls).toEqual([
      { id: 'functions_bash_0', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
    ]);
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'functions_bash_0', content: 'a.txt' });
  });

  it('gets its long tool names back after the upstream used the shortened ones', () => {
    const long = `mcp__server__${'x'.repeat(90)}`;
    const req = parseMessagesRequest({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'go' }],
      tools: [{ name: long, input_schema: { type: 'object' } }],
    });
    const sent = renderChatRequest(req, 'u');
    const short = (sent.tools as Array<{ function: { name: string } }>)[0]!.function.name;
    const upstream = parseChatResponse({
      choices: [
        {
          message: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: short, arguments: '{}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    });
    const shown = renderMessagesResponse(restoreToolNames(upstream, req.tools));
    expect((shown.content as Array<Record<string, unknown>>)[0]).toMatchObject({ type: 'tool_use', name: long });
  });
});

import chatAgent from '../__fixtures__/bodies/chat-request-agent.json';
import messagesAgent from '../__fixtures__/bodies/messages-request-agent.json';
import responsesAgent from '../__fixtures__/bodies/responses-request-agent.json';
import type { ChatRequest } from '../ir';
import { parseMessagesRequest } from '../messages/parse-request';
import { parseResponsesRequest } from '../responses/parse-request';
import { parseChatRequest } from './parse-request';
import { renderChatRequest } from './render-request';

const minimal = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  stream: false,
  dropped: [],
  ...over,
});

describe('renderChatRequest: chat → chat', () => {
  const body = renderChatRequest(parseChatRequest(chatAgent), 'upstream-model');

  it('sends the upstream model and the caller’s conversation in the same order', () => {
    expect(body.model).toBe('upstream-model');
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a travel assistant.' },
      { role: 'system', content: 'Answer in French.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is the weather where this photo was taken?' },
          {
            type: 'image_url',
            image_url: { url: expect.stringMatching(/^data:image\/png;base64,iVBORw0KGgo/), detail: 'high' },
          },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'functions.get_weather:0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_Bx72', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'functions.get_weather:0', content: '18°C, cloudy' },
      { role: 'tool', tool_call_id: 'call_Bx72', content: '14:05' },
      { role: 'system', content: 'Keep it under 20 words.' },
      { role: 'user', content: 'Thanks! And tomorrow?' },
    ]);
  });

  it('sends the output cap as max_tokens and the settings OpenAI-compatible servers know', () => {
    expect(body).toMatchObject({
      max_tokens: 4096,
      temperature: 1.5,
      stop: ['\n\nUser:'],
      stream: true,
      stream_options: { include_usage: true },
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning_effort: 'high',
      user: 'user-1234',
    });
    expect(body).not.toHaveProperty('max_completion_tokens');
    expect(body).not.toHaveProperty('metadata');
    expect(body).not.toHaveProperty('seed');
  });

  it('gives a tool without parameters an empty object schema', () => {
    expect(body.tools).toEqual([
      expect.objectContaining({ function: expect.objectContaining({ name: 'get_weather', strict: true }) }),
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ]);
  });
});

describe('renderChatRequest: guarantees', () => {
  it('asks for stream usage even when the caller did not', () => {
    expect(renderChatRequest(minimal({ stream: true, includeStreamUsage: false }), 'u').stream_options).toEqual({
      include_usage: true,
    });
  });

  it('sends no max_tokens, stream or tool settings when the caller set none', () => {
    const body = renderChatRequest(minimal({ toolChoice: { type: 'required' }, parallelToolCalls: false }), 'u');
    expect(Object.keys(body).sort()).toEqual(['messages', 'model']);
  });

  it('shortens tool names over 64 characters the same way in tools, tool_choice and history', () => {
    const long = `mcp__github__${'create_pull_request_review_comment_'.repeat(3)}`;
    const body = renderChatRequest(
      minimal({
        tools: [{ name: long }],
        toolChoice: { type: 'tool', name: long },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'go' }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: long, arguments: '{}' }] },
          { role: 'user', content: [{ type: 'tool_result', callId: 'c1', content: [{ type: 'text', text: 'ok' }] }] },
        ],
      }),
      'u',
    );
    const short = (body.tools as Array<{ function: { name: string } }>)[0]!.function.name;
    expect(short).toHaveLength(64);
    expect(short.startsWith('mcp__github__create_pull')).toBe(true);
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: short } });
    expect((body.messages as Array<Record<string, unknown>>)[1]!.tool_calls).toEqual([
      { id: 'c1', type: 'function', function: { name: short, arguments: '{}' } },
    ]);
  });

  it('sends a json_schema response format in chat’s nested shape', () => {
    const body = renderChatRequest(
      minimal({ responseFormat: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } }),
      'u',
    );
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
    });
  });
});

describe('renderChatRequest: messages → chat', () => {
  const body = renderChatRequest(parseMessagesRequest(messagesAgent), 'gpt-4.1');
  const messages = body.messages as Array<Record<string, unknown>>;

  it('joins the system blocks into one system message', () => {
    expect(messages[0]).toEqual({ role: 'system', content: 'You are Claude Code.\n\nProject root is /repo.' });
  });

  it('drops thinking, which cannot be replayed to OpenAI, and keeps the text and tool call', () => {
    expect(messages[2]).toEqual({
      role: 'assistant',
      content: 'Listing files.',
      tool_calls: [
        {
          id: 'toolu_01A09q90qw90lq917835lq9',
          type: 'function',
          function: { name: 'bash', arguments: '{"command":"ls"}' },
        },
      ],
    });
  });

  it('answers the call in a tool message and moves the result’s image to the user message after it', () => {
    expect(messages.slice(3, 5)).toEqual([
      { role: 'tool', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: 'package.json\nsrc' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'text', text: 'Also check the README.' },
        ],
      },
    ]);
  });

  it('keeps the text of an error result only', () => {
    expect(messages[6]).toEqual({ role: 'tool', tool_call_id: 'toolu_02B', content: 'ENOENT' });
  });

  it('maps disable_parallel_tool_use and user, and leaves out top_k and the thinking budget', () => {
    expect(body).toMatchObject({
      parallel_tool_calls: false,
      tool_choice: 'auto',
      user: 'claude-user-42',
      max_tokens: 16000,
      stop: ['</answer>'],
    });
    expect(body).not.toHaveProperty('top_k');
    expect(body).not.toHaveProperty('reasoning_effort');
  });
});

describe('renderChatRequest: responses → chat', () => {
  const body = renderChatRequest(parseResponsesRequest(responsesAgent), 'gpt-4.1');
  const messages = body.messages as Array<Record<string, unknown>>;

  it('puts instructions first, drops the reasoning item and turns the function call into tool_calls', () => {
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'system', 'user']);
    expect(messages[0]).toEqual({ role: 'system', content: 'You are a coding agent.' });
    expect(messages[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_read_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/a.test.ts"}' } },
      ],
    });
    expect(messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_read_1', content: 'expect(add(1, 2)).toBe(4);' });
  });

  it('sends the PDF input as a chat file part', () => {
    expect((messages[1]!.content as unknown[])[2]).toEqual({
      type: 'file',
      file: { file_data: 'data:application/pdf;base64,JVBERi0xLjQK', filename: 'spec.pdf' },
    });
  });

  it('maps the named tool choice, text.format and reasoning effort', () => {
    expect(body).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'read_file' } },
      response_format: { type: 'json_schema', json_schema: { name: 'patch', strict: true } },
      reasoning_effort: 'medium',
      max_tokens: 8000,
    });
  });
});

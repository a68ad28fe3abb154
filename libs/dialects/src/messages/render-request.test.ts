import chatAgent from '../__fixtures__/bodies/chat-request-agent.json';
import messagesAgent from '../__fixtures__/bodies/messages-request-agent.json';
import responsesAgent from '../__fixtures__/bodies/responses-request-agent.json';
import { parseChatRequest } from '../chat/parse-request';
import type { ChatRequest, Message } from '../ir';
import { parseResponsesRequest } from '../responses/parse-request';
import { parseMessagesRequest } from './parse-request';
import { renderMessagesRequest } from './render-request';

const options = { defaultMaxTokens: 8192 };
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'm',
  messages: [user('hi')],
  stream: false,
  dropped: [],
  ...over,
});
type Turn = { role: string; content: Array<Record<string, unknown>> };

describe('renderMessagesRequest: chat → messages', () => {
  const body = renderMessagesRequest(parseChatRequest(chatAgent), 'claude-sonnet-4-5', options);
  const turns = body.messages as Turn[];

  it('hoists the leading system and developer messages into system', () => {
    expect(body.system).toEqual([
      { type: 'text', text: 'You are a travel assistant.' },
      { type: 'text', text: 'Answer in French.' },
    ]);
  });

  it('splits the image data URL into a base64 source', () => {
    expect(turns[0]!.content[1]).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: expect.stringMatching(/^iVBORw0KGgo/) },
    });
  });

  it('sanitises tool ids identically on tool_use and tool_result, and parses arguments into input', () => {
    expect(turns[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'functions_get_weather_0', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_Bx72', name: 'get_time', input: {} },
      ],
    });
    expect(turns[2]!.content.slice(0, 2)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'functions_get_weather_0',
        content: [{ type: 'text', text: '18°C, cloudy' }],
      },
      { type: 'tool_result', tool_use_id: 'call_Bx72', content: [{ type: 'text', text: '14:05' }] },
    ]);
  });

  it('turns a later system message into user text and merges it with the user turns around it', () => {
    expect(turns).toHaveLength(3);
    expect(turns[2]!.content.slice(2)).toEqual([
      { type: 'text', text: 'Keep it under 20 words.' },
      { type: 'text', text: 'Thanks! And tomorrow?' },
    ]);
  });

  it('maps the settings, with parallel calls off inside tool_choice and the user in metadata', () => {
    expect(body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      stop_sequences: ['\n\nUser:'],
      stream: true,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      metadata: { user_id: 'user-1234' },
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(body.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ]);
    // Thinking is on (effort high), and Anthropic refuses sampling changes with it.
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('stream_options');
  });
});

describe('renderMessagesRequest: responses → messages', () => {
  const body = renderMessagesRequest(parseResponsesRequest(responsesAgent), 'claude-opus-4-1', options);
  const turns = body.messages as Turn[];

  it('hoists instructions and turns the later developer message into user text', () => {
    expect(body.system).toBe('You are a coding agent.');
    expect(turns[turns.length - 1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Prefer minimal diffs.' },
        { type: 'text', text: 'Go ahead.' },
      ],
    });
  });

  it('never sends OpenAI reasoning as an Anthropic thinking block', () => {
    expect(turns[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_read_1', name: 'read_file', input: { path: 'src/a.test.ts' } }],
    });
    expect(JSON.stringify(body)).not.toContain('thinking');
  });

  it('sends the PDF as a base64 document titled with its file name', () => {
    expect(turns[0]!.content[2]).toEqual({
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
      title: 'spec.pdf',
    });
  });

  it('maps the named tool choice and json_schema format, leaving thinking off because the tool is forced', () => {
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'read_file' });
    expect(body.output_config).toEqual({
      format: { type: 'json_schema', schema: { type: 'object', properties: { diff: { type: 'string' } } } },
    });
    expect(body.max_tokens).toBe(8000);
    expect(body).not.toHaveProperty('thinking');
  });
});

describe('renderMessagesRequest: messages → messages', () => {
  const body = renderMessagesRequest(parseMessagesRequest(messagesAgent), 'claude-sonnet-4-5-20250929', options);
  const turns = body.messages as Turn[];

  it('sends thinking and redacted thinking back exactly as Anthropic issued them', () => {
    expect(turns[1]!.content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: 'I should list files first.', signature: 'EqQBCkgIARABGAIiQL2sig==' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
    ]);
  });

  it('keeps the system blocks, tool results with images, is_error, and the caller’s thinking budget', () => {
    expect(body.system).toEqual([
      { type: 'text', text: 'You are Claude Code.' },
      { type: 'text', text: 'Project root is /repo.' },
    ]);
    expect(turns[2]!.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_01A09q90qw90lq917835lq9',
      content: [
        { type: 'text', text: 'package.json\nsrc' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    });
    expect(turns[4]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_02B', content: [{ type: 'text', text: 'ENOENT' }], is_error: true },
      ],
    });
    expect(body).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 10000 },
      max_tokens: 16000,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
  });
});

describe('renderMessagesRequest: guarantees', () => {
  it('clamps temperature to 0..1 and does not send top_p with it', () => {
    const body = renderMessagesRequest(request({ temperature: 1.7, topP: 0.9 }), 'c', options);
    expect(body.temperature).toBe(1);
    expect(body).not.toHaveProperty('top_p');
    expect(renderMessagesRequest(request({ topP: 0.9 }), 'c', options).top_p).toBe(0.9);
  });

  it('uses the default max_tokens when the caller gave none', () => {
    expect(renderMessagesRequest(request(), 'c', options).max_tokens).toBe(8192);
  });

  it('keeps a thinking budget from an effort at least 1024 and below max_tokens', () => {
    const think = (maxOutputTokens: number) =>
      renderMessagesRequest(request({ maxOutputTokens, reasoning: { effort: 'max' } }), 'c', options).thinking;
    expect(think(100_000)).toEqual({ type: 'enabled', budget_tokens: 32000 });
    expect(think(3000)).toEqual({ type: 'enabled', budget_tokens: 1500 });
    expect(think(1500)).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(think(1024)).toBeUndefined();
    expect(renderMessagesRequest(request({ reasoning: { effort: 'none' } }), 'c', options)).not.toHaveProperty(
      'thinking',
    );
  });

  it('passes adaptive thinking and its effort through as output_config.effort', () => {
    const body = renderMessagesRequest(request({ reasoning: { mode: 'adaptive', effort: 'high' } }), 'c', options);
    expect(body.thinking).toEqual({ type: 'adaptive' });
    expect(body.output_config).toEqual({ effort: 'high' });
  });

  it('drops foreign and unsigned reasoning but keeps Anthropic-signed thinking', () => {
    const body = renderMessagesRequest(
      request({
        messages: [
          user('q'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'openai', signature: 'gAAAA', origin: 'openai' },
              { type: 'reasoning', text: 'unsigned', origin: 'anthropic' },
              { type: 'reasoning', text: 'signed', signature: 'sig', origin: 'anthropic' },
              { type: 'text', text: 'a' },
            ],
          },
        ],
      }),
      'c',
      options,
    );
    expect((body.messages as Turn[])[1]!.content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 'sig' },
      { type: 'text', text: 'a' },
    ]);
  });

  it('drops empty text blocks and the turns left empty, merging the neighbours', () => {
    const body = renderMessagesRequest(
      request({
        messages: [user('a'), { role: 'assistant', content: [{ type: 'text', text: '  ' }] }, user('b'), user('')],
      }),
      'c',
      options,
    );
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
  });

  it('puts tool results before other blocks of the merged user turn', () => {
    const body = renderMessagesRequest(
      request({
        messages: [
          { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{' }] },
          { role: 'system', content: [{ type: 'text', text: 'note' }] },
          { role: 'user', content: [{ type: 'tool_result', callId: 'c', content: [] }] },
        ],
      }),
      'c',
      options,
    );
    expect(body.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'f', input: { _raw: '{' } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c' },
          { type: 'text', text: 'note' },
        ],
      },
    ]);
  });

  it('has no equivalent for JSON mode and sends no output_config for it', () => {
    expect(
      renderMessagesRequest(request({ responseFormat: { type: 'json_object' } }), 'c', options),
    ).not.toHaveProperty('output_config');
  });

  it('adds an auto tool choice to carry disable_parallel_tool_use, and sends no tool choice without tools', () => {
    const tools = [{ name: 'f' }];
    expect(renderMessagesRequest(request({ tools, parallelToolCalls: false }), 'c', options).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(
      renderMessagesRequest(request({ tools, toolChoice: { type: 'required' } }), 'c', options).tool_choice,
    ).toEqual({ type: 'any' });
    expect(renderMessagesRequest(request({ toolChoice: { type: 'required' } }), 'c', options)).not.toHaveProperty(
      'tool_choice',
    );
  });
});

import chatReply from '../__fixtures__/bodies/chat-response-tool-calls.json';
import messagesReply from '../__fixtures__/bodies/messages-response-thinking.json';
import { parseChatResponse } from '../chat/parse-response';
import { UpstreamError } from '../upstream-error';
import type { ChatResponse } from '../ir';
import { ZERO_USAGE } from '../usage';
import { parseMessagesResponse } from './parse-response';
import { renderMessagesResponse } from './render-response';

const reply = (over: Partial<ChatResponse>): ChatResponse => ({
  id: 'x',
  model: 'm',
  created: 1,
  content: [],
  stopReason: 'end_turn',
  usage: ZERO_USAGE,
  ...over,
});

describe('parseMessagesResponse', () => {
  it('reads thinking with its signature, redacted thinking, text and tool use', () => {
    const res = parseMessagesResponse(messagesReply);
    expect(res.content).toEqual([
      {
        type: 'reasoning',
        text: 'The user wants the weather; call the tool.',
        signature: 'EuYBCkQYAiJAbQ8sig+/==',
        origin: 'anthropic',
      },
      { type: 'reasoning', text: '', redacted: 'EmwKAhgBEgy3va3pzix', origin: 'anthropic' },
      { type: 'text', text: 'Checking the weather.' },
      { type: 'tool_call', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(res).toMatchObject({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      model: 'claude-sonnet-4-5-20250929',
      stopReason: 'tool_use',
    });
  });

  it('adds cache reads and writes to input tokens, which Anthropic counts apart', () => {
    expect(parseMessagesResponse(messagesReply).usage).toEqual({
      inputTokens: 1230,
      outputTokens: 120,
      cacheReadTokens: 1000,
      cacheWriteTokens: 200,
    });
  });

  it('reads the matched stop sequence and the context-window stop', () => {
    const base = { type: 'message', content: [{ type: 'text', text: 'a' }], usage: {} };
    expect(parseMessagesResponse({ ...base, stop_reason: 'stop_sequence', stop_sequence: '</answer>' })).toMatchObject({
      stopReason: 'stop_sequence',
      stopSequence: '</answer>',
    });
    expect(parseMessagesResponse({ ...base, stop_reason: 'model_context_window_exceeded' }).stopReason).toBe(
      'context_window_exceeded',
    );
  });

  it('throws an upstream error for an Anthropic error body', () => {
    const error = (() => {
      try {
        parseMessagesResponse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).failure).toMatchObject({ message: 'Overloaded', code: 'overloaded_error' });
  });
});

describe('renderMessagesResponse', () => {
  it('renders an Anthropic reply back exactly, signature unchanged', () => {
    expect(renderMessagesResponse(parseMessagesResponse(messagesReply))).toEqual({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [
        {
          type: 'thinking',
          thinking: 'The user wants the weather; call the tool.',
          signature: 'EuYBCkQYAiJAbQ8sig+/==',
        },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
        { type: 'text', text: 'Checking the weather.' },
        { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 30,
        cache_creation_input_tokens: 200,
        cache_read_input_tokens: 1000,
        output_tokens: 120,
        service_tier: 'standard',
      },
    });
  });

  it(
    'renders an OpenAI reply: tool calls as tool_use with ' + 'parsed input, cached tokens taken out of input_tokens',
    () => {
      const body = renderMessagesResponse(parseChatResponse(chatReply));
      expect(body).toMatchObject({
        id: 'msg_chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
        content: [
          { type: 'text', text: 'Let me check both cities.' },
          { type: 'tool_use', id: 'call_a1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_b2', name: 'get_weather', input: { city: 'Rome' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 176, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024, output_tokens: 45 },
      });
    },
  );

  it('never shows foreign or unsigned reasoning as thinking', () => {
    const body = renderMessagesResponse(
      reply({
        content: [
          { type: 'reasoning', text: 'from deepseek', origin: 'openai' },
          { type: 'reasoning', text: 'encrypted', signature: 'gAAAA', origin: 'openai' },
          { type: 'text', text: 'answer' },
        ],
      }),
    );
    expect(body.content).toEqual([{ type: 'text', text: 'answer' }]);
  });

  it('sanitises tool ids the Anthropic way', () => {
    const body = renderMessagesResponse(
      reply({
        content: [{ type: 'tool_call', id: 'functions.f:0', name: 'f', arguments: 'oops' }],
        stopReason: 'end_turn',
      }),
    );
    expect(body.content).toEqual([{ type: 'tool_use', id: 'functions_f_0', name: 'f', input: { _raw: 'oops' } }]);
    expect(body.stop_reason).toBe('tool_use');
  });

  it('says a refusal as text with stop_reason refusal', () => {
    const body = renderMessagesResponse(reply({ content: [{ type: 'refusal', text: 'No.' }], stopReason: 'refusal' }));
    expect(body).toMatchObject({ content: [{ type: 'text', text: 'No.' }], stop_reason: 'refusal' });
  });
});

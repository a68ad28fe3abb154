import chatReply from '../__fixtures__/bodies/chat-response-tool-calls.json';
import messagesReply from '../__fixtures__/bodies/messages-response-thinking.json';
import { UpstreamError } from '../upstream-error';
import type { ChatResponse } from '../ir';
import { parseMessagesResponse } from '../messages/parse-response';
import { ZERO_USAGE } from '../usage';
import { parseChatResponse } from './parse-response';
import { renderChatResponse } from './render-response';

const reply = (over: Partial<ChatResponse>): ChatResponse => ({
  id: 'x',
  model: 'm',
  created: 1,
  content: [],
  stopReason: 'end_turn',
  usage: ZERO_USAGE,
  ...over,
});

describe('parseChatResponse', () => {
  it('reads text and every tool call of the first choice', () => {
    const res = parseChatResponse(chatReply);
    expect(res).toMatchObject({
      id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      model: 'gpt-4.1-2025-04-14',
      created: 1741570283,
      stopReason: 'tool_use',
    });
    expect(res.content).toEqual([
      { type: 'text', text: 'Let me check both cities.' },
      { type: 'tool_call', id: 'call_a1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', id: 'call_b2', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]);
  });

  it('counts cached tokens inside the prompt, as OpenAI does', () => {
    expect(parseChatResponse(chatReply).usage).toEqual({
      inputTokens: 1200,
      outputTokens: 45,
      cacheReadTokens: 1024,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
  });

  it('reports tool_use when tool calls were emitted even if the upstream said stop', () => {
    const body = structuredClone(chatReply);
    body.choices[0]!.finish_reason = 'stop';
    expect(parseChatResponse(body).stopReason).toBe('tool_use');
  });

  it('reads reasoning_content or reasoning, and a refusal', () => {
    const res = parseChatResponse({
      id: 'c',
      choices: [
        {
          message: { role: 'assistant', content: null, reasoning: 'hmm', refusal: 'I can’t help.' },
          finish_reason: 'content_filter',
        },
      ],
    });
    expect(res.content).toEqual([
      { type: 'reasoning', text: 'hmm', origin: 'openai' },
      { type: 'refusal', text: 'I can’t help.' },
    ]);
    expect(res.stopReason).toBe('refusal');
  });

  it('maps length to max_tokens and a vLLM stop_reason string to the stop sequence', () => {
    expect(parseChatResponse({ choices: [{ message: { content: 'a' }, finish_reason: 'length' }] }).stopReason).toBe(
      'max_tokens',
    );
    const res = parseChatResponse({
      choices: [{ message: { content: 'a' }, finish_reason: 'stop', stop_reason: '</end>' }],
    });
    expect(res).toMatchObject({ stopReason: 'stop_sequence', stopSequence: '</end>' });
  });

  it('throws an upstream error for an error body that came with a 200', () => {
    expect(() => parseChatResponse({ error: { message: 'model overloaded', type: 'server_error' } })).toThrow(
      UpstreamError,
    );
    expect(() => parseChatResponse({ object: 'chat.completion' })).toThrow('The upstream reply has no choices.');
  });
});

describe('renderChatResponse', () => {
  it('renders the exact chat.completion shape', () => {
    expect(renderChatResponse(parseChatResponse(chatReply))).toEqual({
      id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      object: 'chat.completion',
      created: 1741570283,
      model: 'gpt-4.1-2025-04-14',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Let me check both cities.',
            refusal: null,
            tool_calls: chatReply.choices[0]!.message.tool_calls,
            annotations: [],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 45,
        total_tokens: 1245,
        prompt_tokens_details: { cached_tokens: 1024 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
  });

  it(
    'renders an Anthropic reply: reasoning as reasoning_content, content null beside tool calls, usage with cache ' +
      'reads and writes in the prompt',
    () => {
      const body = renderChatResponse(parseMessagesResponse(messagesReply));
      expect(body.id).toBe('chatcmpl-msg_013Zva2CMHLNnXjNJJKqJ2EF');
      const choice = (body.choices as Array<Record<string, unknown>>)[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message).toEqual({
        role: 'assistant',
        content: 'Checking the weather.',
        refusal: null,
        tool_calls: [
          {
            id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
        annotations: [],
        reasoning_content: 'The user wants the weather; call the tool.',
      });
      expect(body.usage).toEqual({
        prompt_tokens: 1230,
        completion_tokens: 120,
        total_tokens: 1350,
        prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
        completion_tokens_details: { reasoning_tokens: 0 },
      });
    },
  );

  it('sends content null when the reply is only tool calls, and the refusal in its own field', () => {
    const tools = renderChatResponse(
      reply({ content: [{ type: 'tool_call', id: 'call_1', name: 'f', arguments: '' }], stopReason: 'tool_use' }),
    );
    expect((tools.choices as Array<{ message: Record<string, unknown> }>)[0]!.message).toMatchObject({
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
    const refusal = renderChatResponse(reply({ content: [{ type: 'refusal', text: 'No.' }], stopReason: 'refusal' }));
    expect((refusal.choices as Array<Record<string, unknown>>)[0]).toMatchObject({
      message: { content: null, refusal: 'No.' },
      finish_reason: 'content_filter',
    });
  });

  it('settles the finish reason against the tool calls actually sent', () => {
    const body = renderChatResponse(reply({ stopReason: 'tool_use', content: [{ type: 'text', text: 'done' }] }));
    expect((body.choices as Array<Record<string, unknown>>)[0]!.finish_reason).toBe('stop');
  });
});

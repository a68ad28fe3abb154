import { buildRequest, foldEvent, readReply, type PlaygroundPrompt, type ReplySoFar } from './dialects';

const weather = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
};
const prompt: PlaygroundPrompt = {
  model: 'house',
  system: 'Be brief.',
  prompt: 'Weather in Oslo?',
  stream: true,
  maxTokens: 256,
  tools: [weather],
  extra: { top_k: 5 },
};
const fold = (dialect: Parameters<typeof foldEvent>[0], events: unknown[]): ReplySoFar =>
  events.reduce<ReplySoFar>((reply, event) => foldEvent(dialect, reply, event), { text: '', toolCalls: [] });

describe('the playground dialects', () => {
  it("builds each dialect's request with its own system, limit and tool shapes, extra fields on top", () => {
    expect(buildRequest('chat', prompt)).toEqual({
      model: 'house',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Oslo?' },
      ],
      max_completion_tokens: 256,
      tools: [{ type: 'function', function: weather }],
      stream: true,
      stream_options: { include_usage: true },
      top_k: 5,
    });
    expect(buildRequest('responses', { ...prompt, stream: false, extra: {} })).toEqual({
      model: 'house',
      instructions: 'Be brief.',
      input: 'Weather in Oslo?',
      max_output_tokens: 256,
      tools: [{ type: 'function', ...weather }],
    });
    expect(buildRequest('messages', { ...prompt, system: ' ', tools: [], extra: {} })).toEqual({
      model: 'house',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      stream: true,
    });
  });

  it('reads text and tool calls from a whole reply in each dialect, and the error of a refusal', () => {
    expect(
      readReply('chat', {
        choices: [
          {
            message: {
              content: null,
              tool_calls: [{ function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
            },
          },
        ],
      }),
    ).toEqual({ text: '', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    expect(
      readReply('responses', {
        output: [
          { type: 'message', content: [{ type: 'output_text', text: 'Hi' }] },
          { type: 'function_call', name: 'get_weather', arguments: '{}' },
        ],
      }),
    ).toEqual({ text: 'Hi', toolCalls: [{ name: 'get_weather', arguments: '{}' }] });
    expect(
      readReply('messages', {
        content: [
          { type: 'text', text: 'Sure.' },
          { type: 'tool_use', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      }),
    ).toEqual({ text: 'Sure.', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    expect(
      readReply('messages', { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down.' } }),
    ).toEqual({ text: '', toolCalls: [], error: 'Slow down.' });
    expect(readReply('chat', { error: 'insufficient_scope', message: 'No.' }).error).toBe('No.');
  });

  it('folds each dialect’s stream into the same reply', () => {
    expect(
      fold('chat', [
        { choices: [{ delta: { content: 'Hel' } }] },
        { choices: [{ delta: { content: 'lo' } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"ci' } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] } }] },
        { choices: [], usage: { prompt_tokens: 3 } },
      ]),
    ).toEqual({ text: 'Hello', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    expect(
      fold('responses', [
        { type: 'response.created', response: {} },
        { type: 'response.output_text.delta', delta: 'Hi' },
        { type: 'response.output_item.done', item: { type: 'function_call', name: 'get_weather', arguments: '{}' } },
      ]),
    ).toEqual({ text: 'Hi', toolCalls: [{ name: 'get_weather', arguments: '{}' }] });
    expect(
      fold('messages', [
        { type: 'message_start', message: {} },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Sure.' } },
        { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', name: 'get_weather', input: {} } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } },
        { type: 'message_stop' },
      ]),
    ).toEqual({ text: 'Sure.', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}', block: 1 }] });
    expect(fold('messages', [{ type: 'error', error: { type: 'overloaded_error', message: 'Busy.' } }]).error).toBe(
      'Busy.',
    );
  });
});

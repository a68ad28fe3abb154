import { upstreamEvents } from '../__fixtures__/streams/replay';
import { createChatStreamParser } from './stream-parser';

const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
  JSON.stringify({
    id: 'chatcmpl-x',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });

describe('createChatStreamParser', () => {
  it('reads a text reply: start, text deltas, stop, usage, end', () => {
    expect(upstreamEvents('chat-text.sse')).toEqual([
      { type: 'start', id: 'chatcmpl-BXq7d2Yk3mNfRz8TqLp1vWc9sEaH', model: 'gpt-4.1-2025-04-14', created: 1747321200 },
      { type: 'text', text: 'Bonjour' },
      { type: 'text', text: ' le monde' },
      { type: 'text', text: ' — ça va? 🌍' },
      { type: 'stop', reason: 'end_turn' },
      { type: 'usage', usage: { inputTokens: 24, outputTokens: 9, cacheReadTokens: 0, reasoningTokens: 0 } },
      { type: 'end' },
    ]);
  });

  it('numbers parallel tool calls densely and streams their argument pieces', () => {
    const events = upstreamEvents('chat-tools-parallel.sse');
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', index: 0, id: 'call_3QHd5bTjKfV9r2LmXw8yNcAe', name: 'get_weather' },
      { type: 'tool_call', index: 1, id: 'call_8WmZsL0pQe4xTn7YbVd2HkJu', name: 'get_time' },
    ]);
    const args = (index: number) =>
      events.flatMap((e) => (e.type === 'tool_arguments' && e.index === index ? [e.delta] : [])).join('');
    expect(args(0)).toBe('{"location": "Paris"}');
    expect(args(1)).toBe('{"tz": "Europe/Paris"}');
    expect(events.find((e) => e.type === 'stop')).toEqual({ type: 'stop', reason: 'tool_use' });
    expect(events.find((e) => e.type === 'usage')).toMatchObject({
      usage: { inputTokens: 312, cacheReadTokens: 256, outputTokens: 48 },
    });
  });

  it('reads reasoning_content (DeepSeek) and reasoning (vLLM) as reasoning', () => {
    const deepseek = upstreamEvents('chat-reasoning.sse');
    expect(deepseek.filter((e) => e.type === 'reasoning').map((e) => (e.type === 'reasoning' ? e.text : ''))).toEqual([
      'The user asks 2+2.',
      ' That is 4.',
    ]);
    expect(deepseek.find((e) => e.type === 'usage')).toMatchObject({
      usage: { reasoningTokens: 12, outputTokens: 22 },
    });
    expect(upstreamEvents('chat-tools-then-stop.sse')).toContainEqual({
      type: 'reasoning',
      text: 'Need the weather tool.',
    });
  });

  it('passes the upstream stop reason on unsettled (renderers settle it against what they emitted)', () => {
    expect(upstreamEvents('chat-tools-then-stop.sse').find((e) => e.type === 'stop')).toEqual({
      type: 'stop',
      reason: 'end_turn',
    });
  });

  it('a chunk with both content and finish_reason is split: content first, then the stop, then usage', () => {
    expect(upstreamEvents('chat-fake-stream.sse').map((e) => e.type)).toEqual([
      'start',
      'text',
      'stop',
      'usage',
      'end',
    ]);
  });

  it('an error payload mid-stream becomes an error event and nothing follows', () => {
    const events = upstreamEvents('chat-error-midstream.sse');
    expect(events.map((e) => e.type)).toEqual(['start', 'text', 'error']);
    expect(events[2]).toEqual({
      type: 'error',
      error: {
        status: 500,
        message: 'The server had an error while processing your request. Sorry about that!',
        code: 'server_error',
        param: null,
      },
    });
  });

  it('maps error codes to statuses: numeric code, then known code or type, else 502', () => {
    const status = (payload: object) => {
      const events = createChatStreamParser().push({ data: JSON.stringify(payload) });
      return events[0]?.type === 'error' ? events[0].error.status : undefined;
    };
    expect(status({ error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } })).toBe(429);
    expect(status({ error: { message: 'bad', type: 'BadRequestError', code: 400 } })).toBe(400);
    expect(status({ error: { message: 'busy', type: 'overloaded_error' } })).toBe(503);
    expect(status({ error: { message: '?', type: 'constructor' } })).toBe(502);
    expect(status({ error: 'plain text error' })).toBe(502);
  });

  it('text that is not JSON is reported as an upstream error', () => {
    const parser = createChatStreamParser();
    expect(parser.push({ data: '{"id":"chatcmpl-x","choi' })).toEqual([
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ status: 502 }) }),
    ]);
    expect(parser.push({ data: '[DONE]' })).toEqual([]);
  });

  it('starts a new call when an index is reused with a new id, and keeps arguments of unannounced calls', () => {
    const parser = createChatStreamParser();
    const events = [
      chunk({ tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ id: 'b', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 5, function: { arguments: '{"x":1}' } }] }),
    ].flatMap((data) => parser.push({ data }));
    const calls = events.filter((e) => e.type === 'tool_call');
    expect(calls.map((e) => (e.type === 'tool_call' ? [e.index, e.id, e.name] : []))).toEqual([
      [0, 'a', 'f'],
      [1, 'b', 'g'],
      [2, expect.stringMatching(/^call_/), ''],
    ]);
    expect(events).toContainEqual({ type: 'tool_arguments', index: 2, delta: '{"x":1}' });
  });

  it('ignores content after finish_reason but still reads usage after it', () => {
    const parser = createChatStreamParser();
    const events = [
      chunk({ content: 'a' }, 'stop'),
      chunk({ content: 'late' }, null, { usage: { prompt_tokens: 3, completion_tokens: 1 } }),
    ].flatMap((data) => parser.push({ data }));
    expect(events.map((e) => e.type)).toEqual(['start', 'text', 'stop', 'usage']);
  });

  it('skips empty keep-alive data and tolerates a missing role chunk', () => {
    const parser = createChatStreamParser();
    expect(parser.push({ data: '' })).toEqual([]);
    expect(parser.push({ data: chunk({ content: 'hi' }) }).map((e) => e.type)).toEqual(['start', 'text']);
  });
});

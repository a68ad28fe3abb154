import { upstreamEvents } from '../__fixtures__/streams/replay';
import { createMessagesStreamParser } from './stream-parser';

describe('createMessagesStreamParser', () => {
  it('reads a text reply: start with input usage, text deltas, usage, stop, end; pings yield nothing', () => {
    const events = upstreamEvents('messages-text.sse');
    expect(events).toEqual([
      {
        type: 'start',
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        model: 'claude-sonnet-4-5-20250929',
        created: expect.any(Number),
        usage: { inputTokens: 472, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 2 },
      },
      { type: 'text', text: 'Bonjour' },
      { type: 'text', text: ' le monde' },
      { type: 'text', text: ' — ça va? 🌍' },
      { type: 'usage', usage: { inputTokens: 472, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 9 } },
      { type: 'stop', reason: 'end_turn' },
      { type: 'end' },
    ]);
  });

  it('counts tool_use blocks densely and routes input_json_delta by block index', () => {
    const events = upstreamEvents('messages-tools.sse');
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' },
      { type: 'tool_call', index: 1, id: 'toolu_01HzB8cV3kYqW5nLpD2sRtMa', name: 'get_time' },
    ]);
    const args = (index: number) =>
      events.flatMap((e) => (e.type === 'tool_arguments' && e.index === index ? [e.delta] : [])).join('');
    expect(args(0)).toBe('{"location": "Paris"}');
    expect(args(1)).toBe('{"tz": "Europe/Paris"}');
    expect(events.find((e) => e.type === 'start')).toMatchObject({ usage: { inputTokens: 312, cacheReadTokens: 256 } });
    expect(events.find((e) => e.type === 'usage')).toEqual({ type: 'usage', usage: { outputTokens: 48 } });
    expect(events.find((e) => e.type === 'stop')).toEqual({ type: 'stop', reason: 'tool_use' });
  });

  it('reads thinking, its signature (origin anthropic) and redacted thinking', () => {
    const events = upstreamEvents('messages-thinking.sse').filter((e) => e.type.startsWith('reasoning'));
    expect(events).toEqual([
      { type: 'reasoning', text: 'The user asks 2+2.' },
      { type: 'reasoning', text: ' That is 4.' },
      {
        type: 'reasoning_signature',
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds/xy+z0YE3VH/k8aq9k8AN9EZg==',
        origin: 'anthropic',
      },
      { type: 'reasoning_redacted', data: expect.stringMatching(/^EmwKAhgB/) },
    ]);
  });

  it('an error event mid-stream becomes an error with the status of its type, and nothing follows', () => {
    const events = upstreamEvents('messages-error-midstream.sse');
    expect(events.map((e) => e.type)).toEqual(['start', 'text', 'error']);
    expect(events[2]).toEqual({
      type: 'error',
      error: { status: 529, message: 'Overloaded', code: 'overloaded_error', param: null },
    });
  });

  it.each([
    ['overloaded_error', 529],
    ['api_error', 500],
    ['rate_limit_error', 429],
    ['invalid_request_error', 400],
    ['authentication_error', 401],
    ['permission_error', 403],
    ['not_found_error', 404],
    ['request_too_large', 413],
    ['timeout_error', 504],
    ['billing_error', 402],
    ['something_new', 502],
  ])('maps Anthropic error type %s to status %d', (type, status) => {
    const [event] = createMessagesStreamParser().push({
      event: 'error',
      data: JSON.stringify({ type: 'error', error: { type, message: 'x' } }),
    });
    expect(event).toMatchObject({ type: 'error', error: { status } });
  });

  it('dispatches on the JSON type when a proxy dropped the event: line, and on the event name when present', () => {
    const parser = createMessagesStreamParser();
    expect(
      parser.push({
        data: '{"type":"message_start","message":{"id":"msg_1","model":"c","usage":{"input_tokens":1}}}',
      })[0],
    ).toMatchObject({ type: 'start', id: 'msg_1' });
    expect(parser.push({ event: 'message_stop', data: '{}' })).toEqual([{ type: 'end' }]);
  });

  it('ignores unknown events, citations and server tool blocks', () => {
    const parser = createMessagesStreamParser();
    expect(parser.push({ event: 'brand_new_event', data: '{"type":"brand_new_event"}' })).toEqual([]);
    expect(
      parser.push({
        event: 'content_block_delta',
        data: '{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}',
      }),
    ).toEqual([]);
    expect(
      parser.push({
        event: 'content_block_start',
        data:
          '{"type":"content_block_start","index":0,' +
          '"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}',
      }),
    ).toEqual([]);
  });

  it('carries the matched stop sequence', () => {
    const parser = createMessagesStreamParser();
    expect(
      parser.push({
        event: 'message_delta',
        data:
          '{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"###"},' +
          '"usage":{"output_tokens":4}}',
      }),
    ).toEqual([
      { type: 'usage', usage: { outputTokens: 4 } },
      { type: 'stop', reason: 'stop_sequence', stopSequence: '###' },
    ]);
  });
});

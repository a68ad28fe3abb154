import { decode, fixture } from './__fixtures__/streams/replay';
import { createSseDecoder, encodeSse, type SseEvent } from './sse';

/** Splits bytes at pseudo-random points (deterministic per seed), including inside multi-byte characters. */
function split(bytes: Uint8Array, seed: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let state = seed;
  for (let at = 0; at < bytes.length;) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const size = 1 + (state % 7);
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

const FIXTURES = [
  'chat-text.sse',
  'chat-tools-parallel.sse',
  'chat-reasoning.sse',
  'messages-text.sse',
  'messages-thinking.sse',
];

describe('createSseDecoder', () => {
  it.each(FIXTURES)('SSE frames split at arbitrary byte boundaries decode identically (%s)', (name) => {
    const text = fixture(name);
    const whole = decode([text]);
    expect(whole.length).toBeGreaterThan(3);
    const bytes = new TextEncoder().encode(text);
    for (const seed of [1, 7, 42, 1234]) expect(decode(split(bytes, seed))).toEqual(whole);
    // One byte at a time cuts every multi-byte character (é, —, 🌍) in the middle.
    expect(decode(split(bytes, 0).flatMap((piece) => [...piece].map((b) => Uint8Array.of(b))))).toEqual(whole);
  });

  it('decodes CRLF line endings like LF', () => {
    const text = fixture('messages-text.sse');
    expect(decode([text.replace(/\n/g, '\r\n')])).toEqual(decode([text]));
    expect(decode([text.replace(/\n/g, '\r')])).toEqual(decode([text]));
  });

  it('a CRLF split between two chunks is one line ending, not a blank line', () => {
    expect(decode(['event: ping\r', '\ndata: {}\r', '\n\r', '\n'])).toEqual([{ event: 'ping', data: '{}' }]);
  });

  it('ignores comment lines and keeps events without an event name as data only', () => {
    expect(decode([': OPENROUTER PROCESSING\n\ndata: {"a":1}\n\n: keep-alive\n\n'])).toEqual([{ data: '{"a":1}' }]);
  });

  it('joins multi-line data with a line feed', () => {
    expect(decode(['data: a\ndata: b\n\n'])).toEqual([{ data: 'a\nb' }]);
  });

  it('end() delivers a last event whose blank line never came', () => {
    const events: SseEvent[] = [];
    const decoder = createSseDecoder((event) => events.push(event));
    decoder.feed('data: {"x":1}\n\ndata: [DONE]');
    expect(events).toEqual([{ data: '{"x":1}' }]);
    decoder.end();
    expect(events).toEqual([{ data: '{"x":1}' }, { data: '[DONE]' }]);
  });
});

describe('encodeSse', () => {
  it('writes event and data lines ended by a blank line', () => {
    expect(encodeSse({ event: 'message_stop', data: '{"type":"message_stop"}' })).toBe(
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    );
    expect(encodeSse({ data: '[DONE]' })).toBe('data: [DONE]\n\n');
  });

  it('round-trips through the decoder, multi-line data included', () => {
    const frames = [{ event: 'x', data: '{"a":"b"}' }, { data: 'line1\nline2' }];
    expect(decode([frames.map(encodeSse).join('')])).toEqual(frames);
  });
});

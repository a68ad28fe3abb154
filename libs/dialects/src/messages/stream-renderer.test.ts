import {
  assembleMessages,
  messagesViolations,
  payload,
  received,
  translate,
  upstreamEvents,
} from '../__fixtures__/streams/replay';
import type { StreamEvent } from '../ir';
import { createMessagesStreamRenderer } from './stream-renderer';

const MODEL = 'house/claude';
const FIXTURES = [
  'chat-text.sse',
  'chat-tools-parallel.sse',
  'chat-reasoning.sse',
  'chat-tools-then-stop.sse',
  'chat-fake-stream.sse',
  'chat-error-midstream.sse',
  'messages-text.sse',
  'messages-tools.sse',
  'messages-thinking.sse',
  'messages-error-midstream.sse',
];

const render = (name: string) => translate(name, createMessagesStreamRenderer({ model: MODEL }));
const renderEvents = (events: StreamEvent[]) => {
  const renderer = createMessagesStreamRenderer({ model: MODEL });
  return events.flatMap((e) => renderer.render(e));
};
const types = (frames: ReturnType<typeof render>) => received(frames).map((f) => f.event);
const START: StreamEvent = { type: 'start', id: 'chatcmpl-1', model: 'up', created: 1 };

describe('createMessagesStreamRenderer', () => {
  it.each(FIXTURES)('Anthropic frames always have an event: line naming the payload type (%s)', (name) => {
    const frames = received(render(name));
    expect(frames.every((f) => f.event !== undefined && f.event === payload(f).type)).toBe(true);
    if (!name.includes('error')) expect(messagesViolations(render(name))).toEqual([]);
  });

  it('chat→messages opens one block at a time, with dense indices and one stop per start', () => {
    const frames = renderEvents([
      START,
      { type: 'reasoning', text: 'think' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_call', index: 0, id: 'call_a', name: 'f' },
      { type: 'tool_arguments', index: 0, delta: '{}' },
      { type: 'text', text: 'And more.' },
      { type: 'tool_call', index: 1, id: 'call_b', name: 'g' },
      { type: 'stop', reason: 'tool_use' },
      { type: 'end' },
    ]);
    expect(messagesViolations(frames)).toEqual([]);
    expect(assembleMessages(frames).blocks.map((b) => b.type)).toEqual([
      'thinking',
      'text',
      'tool_use',
      'text',
      'tool_use',
    ]);
  });

  it('a tool-only answer starts its tool_use at index 0 and never opens an empty text block', () => {
    const events = received(render('chat-tools-parallel.sse')).map(payload);
    const starts = events.filter((e) => e.type === 'content_block_start');
    expect(starts.map((s) => [s.index, (s.content_block as { type: string }).type])).toEqual([
      [0, 'tool_use'],
      [1, 'tool_use'],
    ]);
  });

  it('holds message_delta until the usage chunk arriving after finish_reason', () => {
    const renderer = createMessagesStreamRenderer({ model: MODEL });
    const upstream = upstreamEvents('chat-text.sse');
    const stopAt = upstream.findIndex((e) => e.type === 'stop');
    const beforeUsage = upstream.slice(0, stopAt + 1).flatMap((e) => renderer.render(e));
    expect(types(beforeUsage).slice(-2)).toEqual(['content_block_delta', 'content_block_stop']);
    const usage = upstream[stopAt + 1]!;
    expect(usage.type).toBe('usage');
    expect(renderer.render(usage)).toEqual([]);
    const atEnd = renderer.render({ type: 'end' });
    expect(types(atEnd)).toEqual(['message_delta', 'message_stop']);
    expect(payload(received(atEnd)[0]!)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 24, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 },
    });
  });

  it('stop reason follows tool calls actually emitted: an upstream that says stop after tool calls → tool_use', () => {
    expect(assembleMessages(render('chat-tools-then-stop.sse')).stopReason).toBe('tool_use');
  });

  it('tool ids are sanitised to [a-zA-Z0-9_-]', () => {
    const frames = render('chat-tools-then-stop.sse');
    expect(messagesViolations(frames)).toEqual([]);
    expect(assembleMessages(frames).blocks.find((b) => b.type === 'tool_use')).toEqual({
      type: 'tool_use',
      id: 'functions_get_weather_0',
      name: 'get_weather',
      input: { location: 'Oslo' },
    });
  });

  it.each([
    [
      'chat-error-midstream.sse',
      'api_error',
      'The server had an error while processing your request. Sorry about that!',
    ],
    ['messages-error-midstream.sse', 'overloaded_error', 'Overloaded'],
  ])('an upstream error mid-stream becomes event: error and nothing follows (%s)', (name, type, message) => {
    const frames = received(render(name));
    expect(frames[frames.length - 1]).toEqual({
      event: 'error',
      data: JSON.stringify({ type: 'error', error: { type, message } }),
    });
    expect(frames.map((f) => f.event)).not.toContain('message_stop');
  });

  it('message_start shows the caller model, reuses a msg_ id and carries input usage from the start', () => {
    expect(payload(received(render('messages-tools.sse'))[0]!)).toEqual({
      type: 'message_start',
      message: {
        id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 56,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 256,
          output_tokens: 1,
          service_tier: 'standard',
        },
      },
    });
    expect(received(render('messages-tools.sse'))[1]!.event).toBe('ping');
    expect(payload(received(render('chat-text.sse'))[0]!)).toMatchObject({
      message: { id: expect.stringMatching(/^msg_/), model: MODEL },
    });
  });

  it('arguments for an earlier call whose block is closed are dropped (blocks cannot reopen)', () => {
    const frames = renderEvents([
      START,
      { type: 'tool_call', index: 0, id: 'call_a', name: 'f' },
      { type: 'tool_arguments', index: 0, delta: '{"a":' },
      { type: 'tool_call', index: 1, id: 'call_b', name: 'g' },
      { type: 'tool_arguments', index: 0, delta: '1}' },
      { type: 'tool_arguments', index: 1, delta: '{}' },
      { type: 'end' },
    ]);
    expect(messagesViolations(frames)).toEqual([]);
    const deltas = received(frames)
      .map(payload)
      .filter((p) => p.type === 'content_block_delta');
    expect(deltas.map((d) => [d.index, (d.delta as { partial_json: string }).partial_json])).toEqual([
      [0, '{"a":'],
      [1, '{}'],
    ]);
  });

  it(
    'a foreign signature is dropped; an Anthropic signature ' + 'without thinking text still makes a thinking block',
    () => {
      const foreign = renderEvents([
        START,
        { type: 'reasoning', text: 'x' },
        { type: 'reasoning_signature', signature: 'enc', origin: 'openai' },
        { type: 'end' },
      ]);
      expect(assembleMessages(foreign).blocks).toEqual([{ type: 'thinking', thinking: 'x', signature: '' }]);
      const omitted = renderEvents([
        START,
        { type: 'reasoning_signature', signature: 'sig', origin: 'anthropic' },
        { type: 'reasoning', text: 'next' },
        { type: 'end' },
      ]);
      expect(messagesViolations(omitted)).toEqual([]);
      expect(assembleMessages(omitted).blocks).toEqual([
        { type: 'thinking', thinking: '', signature: 'sig' },
        { type: 'thinking', thinking: 'next', signature: '' },
      ]);
    },
  );

  it('echoes the matched stop sequence, and a refusal is sent as text with stop_reason refusal', () => {
    const stopped = assembleMessages(
      renderEvents([
        START,
        { type: 'text', text: 'a' },
        { type: 'stop', reason: 'stop_sequence', stopSequence: '###' },
        { type: 'end' },
      ]),
    );
    expect([stopped.stopReason, stopped.stopSequence]).toEqual(['stop_sequence', '###']);
    const refused = assembleMessages(
      renderEvents([
        START,
        { type: 'refusal', text: 'I cannot help.' },
        { type: 'stop', reason: 'refusal' },
        { type: 'end' },
      ]),
    );
    expect([refused.blocks, refused.stopReason]).toEqual([[{ type: 'text', text: 'I cannot help.' }], 'refusal']);
  });

  it('an empty reply still closes properly: message_start, message_delta, message_stop', () => {
    const frames = renderEvents([START, { type: 'stop', reason: 'end_turn' }, { type: 'end' }]);
    expect(types(frames)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
  });
});

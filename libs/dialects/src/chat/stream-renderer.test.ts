import {
  assembleChat,
  chatViolations,
  payload,
  received,
  translate,
  upstreamEvents,
} from '../__fixtures__/streams/replay';
import type { StreamEvent } from '../ir';
import { createChatStreamRenderer } from './stream-renderer';

const MODEL = 'house/fast';
const FIXTURES = [
  'chat-text.sse',
  'chat-tools-parallel.sse',
  'chat-reasoning.sse',
  'chat-tools-then-stop.sse',
  'chat-fake-stream.sse',
  'messages-text.sse',
  'messages-tools.sse',
  'messages-thinking.sse',
];

const render = (name: string, includeUsage: boolean) =>
  translate(name, createChatStreamRenderer({ model: MODEL, includeUsage }));

describe('createChatStreamRenderer', () => {
  it.each(FIXTURES)('a chat caller without include_usage never sees a usage chunk or usage field (%s)', (name) => {
    const frames = render(name, false);
    expect(chatViolations(frames, { model: MODEL, includeUsage: false })).toEqual([]);
    expect(assembleChat(frames).usages).toEqual([]);
  });

  it.each(FIXTURES)(
    'a chat caller with include_usage sees exactly one usage chunk, just before [DONE] (%s)',
    (name) => {
      const frames = render(name, true);
      expect(chatViolations(frames, { model: MODEL, includeUsage: true })).toEqual([]);
      const chunks = received(frames).slice(0, -1).map(payload);
      expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
      expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
    },
  );

  it('every chunk carries the same id and created and the caller model; the upstream id is kept or prefixed', () => {
    const chunks = received(render('chat-text.sse', false)).slice(0, -1).map(payload);
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-BXq7d2Yk3mNfRz8TqLp1vWc9sEaH']));
    expect(new Set(chunks.map((c) => c.created))).toEqual(new Set([1747321200]));
    const fromAnthropic = received(render('messages-text.sse', false)).slice(0, -1).map(payload);
    expect(new Set(fromAnthropic.map((c) => c.id)).size).toBe(1);
    expect(fromAnthropic[0]!.id).toBe('chatcmpl-msg_01XFDUDYJgAACzvnptvVoYEL');
    const renderer = createChatStreamRenderer({ model: MODEL, includeUsage: false });
    expect(payload(renderer.render({ type: 'start', id: '', model: 'm', created: 5 })[0]!).id).toEqual(
      expect.stringMatching(/^chatcmpl-[A-Za-z0-9]{24}$/),
    );
  });

  it('a tool call whose upstream sent no argument text gets {} before the finish, so clients can parse it', () => {
    const renderer = createChatStreamRenderer({ model: MODEL, includeUsage: false });
    const events: StreamEvent[] = [
      { type: 'start', id: 'x', model: 'm', created: 1 },
      { type: 'tool_call', index: 0, id: 'toolu_1', name: 'now' },
      { type: 'tool_call', index: 1, id: 'toolu_2', name: 'f' },
      { type: 'tool_arguments', index: 1, delta: '{"a":1}' },
      { type: 'stop', reason: 'tool_use' },
      { type: 'end' },
    ];
    expect(assembleChat(events.flatMap((e) => renderer.render(e))).calls.map((c) => c.arguments)).toEqual([
      '{}',
      '{"a":1}',
    ]);
  });

  it('the first chunk is the assistant role with empty content and a null refusal', () => {
    expect(payload(received(render('messages-tools.sse', false))[0]!)).toEqual({
      id: expect.any(String),
      object: 'chat.completion.chunk',
      created: expect.any(Number),
      model: MODEL,
      choices: [
        { index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
      ],
    });
  });

  it(
    'stop reason follows tool calls actually emitted: an ' + 'upstream that says stop after tool calls → tool_calls',
    () => {
      const reply = assembleChat(render('chat-tools-then-stop.sse', true));
      expect(reply.calls).toEqual([
        { id: 'functions.get_weather:0', name: 'get_weather', arguments: '{"location":"Oslo"}' },
      ]);
      expect(reply.finishReasons).toEqual(['tool_calls']);
    },
  );

  it('an upstream tool_use stop without any tool call emitted becomes stop', () => {
    const renderer = createChatStreamRenderer({ model: MODEL, includeUsage: false });
    const events: StreamEvent[] = [
      { type: 'start', id: 'x', model: 'm', created: 1 },
      { type: 'text', text: 'hi' },
      { type: 'stop', reason: 'tool_use' },
      { type: 'end' },
    ];
    expect(assembleChat(events.flatMap((e) => renderer.render(e))).finishReasons).toEqual(['stop']);
    expect(renderer.summary()).toMatchObject({ toolCalls: 0, stopReason: 'end_turn' });
  });

  it('a chunk with both content and finish_reason is split: the content chunk comes before the finish chunk', () => {
    const chunks = received(render('chat-fake-stream.sse', true)).slice(0, -1).map(payload);
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: { content: 'All in one chunk.' }, logprobs: null, finish_reason: null }],
      [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
      [],
    ]);
  });

  it.each(['chat-error-midstream.sse', 'messages-error-midstream.sse'])(
    'an upstream error mid-stream becomes the in-stream error payload and nothing follows (%s)',
    (name) => {
      const frames = received(render(name, true));
      const last = frames[frames.length - 1]!;
      expect(frames.filter((f) => f.data === '[DONE]')).toEqual([]);
      expect(assembleChat(frames.slice(0, -1)).text).toBe('Partial');
      expect(payload(last)).toEqual({
        error: name.startsWith('chat')
          ? {
              message: 'The server had an error while processing your request. Sorry about that!',
              type: 'server_error',
              param: null,
              code: null,
            }
          : { message: 'Overloaded', type: 'server_error', param: null, code: null },
      });
    },
  );

  it('usage after the stop is counted in the final usage chunk and the summary', () => {
    const renderer = createChatStreamRenderer({ model: MODEL, includeUsage: true });
    translate('messages-tools.sse', renderer);
    expect(renderer.summary()).toEqual({
      toolCalls: 2,
      stopReason: 'tool_use',
      usage: { inputTokens: 312, outputTokens: 48, cacheReadTokens: 256, cacheWriteTokens: 0 },
    });
  });

  it('a tool call without an id gets one; refusals arrive as refusal deltas', () => {
    const renderer = createChatStreamRenderer({ model: MODEL, includeUsage: false });
    const frames = (
      [
        { type: 'refusal', text: 'No.' },
        { type: 'tool_call', index: 0, id: '', name: 'f' },
        { type: 'end' },
      ] as StreamEvent[]
    ).flatMap((e) => renderer.render(e));
    const chunks = received(frames).slice(0, -1).map(payload);
    expect(JSON.stringify(chunks[1])).toContain('"delta":{"refusal":"No."}');
    expect(assembleChat(frames).calls[0]!.id).toEqual(expect.stringMatching(/^call_/));
  });

  it('nothing is written after [DONE]', () => {
    const renderer = createChatStreamRenderer({ model: MODEL, includeUsage: false });
    upstreamEvents('chat-text.sse').forEach((e) => renderer.render(e));
    expect(renderer.render({ type: 'text', text: 'late' })).toEqual([]);
    expect(renderer.render({ type: 'end' })).toEqual([]);
  });
});

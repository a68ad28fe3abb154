import { callerDialect, type SseEvent, type SseFrame, type StreamEvent } from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import { EventChain, sentWatchersOf, type HookPart } from './call-hooks';
import { hookedFrameSource, responseIdOf } from './hooked-stream';
import type { CallerCall } from './plan';

const engine = { dialect: 'openai', baseUrl: 'http://x', model: 'up', headers: {}, label: 'sim' } as Engine;
const chatCall = (): CallerCall => ({
  adapter: callerDialect('chat'),
  callerModel: 'house',
  fallbacks: [],
  stream: true,
  includeUsage: false,
});
const chunk = (delta: Record<string, unknown>, finish: string | null = null): SseEvent => ({
  data: JSON.stringify({
    id: 'chatcmpl-up1',
    object: 'chat.completion.chunk',
    created: 7,
    model: 'up',
    choices: [{ index: 0, delta, finish_reason: finish }],
  }),
});
const wire = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'hello ' }), chunk({ content: 'world' })];

const upper: HookPart = {
  stream: () => ({
    rewrites: true,
    push: (event: StreamEvent) =>
      event.type === 'text' ? [{ type: 'text', text: event.text.toUpperCase() }] : undefined,
  }),
};

const textOf = (frames: Array<{ data: string }>) =>
  frames
    .map((frame) => (JSON.parse(frame.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0])
    .map((choice) => choice?.delta.content ?? '')
    .join('');

describe('a hooked stream', () => {
  it('is rendered from the filtered events when a filter rewrites, and reads the id the caller sees', () => {
    const source = hookedFrameSource(chatCall(), engine, 'req_1', EventChain.of([upper]));
    const frames = wire.flatMap((event) => source.push(event).frames);
    expect(textOf(frames)).toBe('HELLO WORLD');
    expect(source.textTemplate()).toBeUndefined();
    expect(source.responseId).toBe('chatcmpl-up1');
  });

  it('is passed through as the upstream sent it when its filters only watch', () => {
    const seen: string[] = [];
    const watcher: HookPart = {
      stream: () => ({ rewrites: false, push: (event) => void (event.type === 'text' && seen.push(event.text)) }),
    };
    const source = hookedFrameSource(chatCall(), engine, 'req_1', EventChain.of([watcher]));
    const frames = wire.flatMap((event) => source.push(event).frames);
    expect(textOf(frames)).toBe('hello world');
    expect(seen).toEqual(['hello ', 'world']);
  });

  it('halts at an error event a filter passes on: its frames end the stream in the caller’s dialect', () => {
    const failure = { status: 400, message: 'Blocked by guardrail "x".', code: 'guardrail_blocked' };
    const blocker: HookPart = {
      stream: () => ({
        rewrites: true,
        push: (event) =>
          event.type === 'text' && event.text.includes('world') ? [{ type: 'error', error: failure }] : undefined,
      }),
    };
    const source = hookedFrameSource(chatCall(), engine, 'req_1', EventChain.of([blocker]));
    const frames = wire.flatMap((event) => source.push(event).frames);
    expect(source.halted).toEqual(failure);
    expect(frames.at(-1)!.data).toContain('guardrail_blocked');
    expect(source.push(chunk({ content: 'more' })).frames).toEqual([]);
  });
});

describe('a stream whose reply a hook watches as sent', () => {
  const watching = () => {
    const sent: SseFrame[] = [];
    const part: HookPart = { sent: { body: () => undefined, frames: (frames) => void sent.push(...frames) } };
    return { sent, part };
  };

  it('shows the watcher every frame the caller gets, ending frames included, and relays none by template', () => {
    const { sent, part } = watching();
    const source = hookedFrameSource(chatCall(), engine, 'req_1', EventChain.of([part]), sentWatchersOf([part]));
    expect(source.textTemplate()).toBeUndefined();
    const frames = [
      ...wire.flatMap((event) => source.push(event).frames),
      ...source.fail({ status: 502, message: 'x' }),
    ];
    expect(sent).toEqual(frames);
    expect(textOf(frames.slice(0, -1))).toBe('hello world');
    expect(source.responseId).toBe('chatcmpl-up1');
  });

  it('shows the frames as rendered after a filter rewrote them', () => {
    const { sent, part } = watching();
    const parts = [part, upper];
    const source = hookedFrameSource(chatCall(), engine, 'req_1', EventChain.of(parts), sentWatchersOf(parts));
    wire.forEach((event) => source.push(event));
    expect(textOf(sent)).toBe('HELLO WORLD');
  });

  it('has no watchers to show when no part watches', () => {
    expect(sentWatchersOf([upper])).toBeUndefined();
    expect(sentWatchersOf(undefined)).toBeUndefined();
  });
});

describe('responseIdOf', () => {
  it('finds the id in each dialect’s first frames', () => {
    expect(responseIdOf([{ data: '{"id":"chatcmpl-1","choices":[]}' }])).toBe('chatcmpl-1');
    expect(responseIdOf([{ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_1"}}' }])).toBe(
      'msg_1',
    );
    expect(responseIdOf([{ data: '[DONE]' }, { data: '{"type":"response.created","response":{"id":"resp_1"}}' }])).toBe(
      'resp_1',
    );
    expect(responseIdOf([{ data: '{"type":"ping"}' }])).toBeUndefined();
  });
});

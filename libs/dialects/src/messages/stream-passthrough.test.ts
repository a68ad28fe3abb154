import { decode, fixture, messagesViolations, payload, upstreamEvents } from '../__fixtures__/streams/replay';
import type { SseFrame, StreamEvent } from '../ir';
import { createMessagesStreamParser } from './stream-parser';
import { createMessagesPassthrough } from './stream-passthrough';

function pass(name: string, model: string) {
  const passthrough = createMessagesPassthrough({ model });
  const upstream = decode([fixture(name)]);
  const frames: SseFrame[] = [];
  const events: StreamEvent[] = [];
  for (const event of upstream) {
    const out = passthrough.push(event);
    frames.push(...out.frames);
    events.push(...out.events);
  }
  return { upstream, frames, events };
}

describe('createMessagesPassthrough', () => {
  it.each(['messages-text.sse', 'messages-tools.sse', 'messages-thinking.sse'])(
    'forwards every frame byte-identical, pings included, except the model in message_start (%s)',
    (name) => {
      const { upstream, frames } = pass(name, 'house/claude');
      expect(messagesViolations(frames)).toEqual([]);
      expect(frames.slice(1)).toEqual(upstream.slice(1));
      expect(payload(frames[0]!)).toEqual({
        ...payload(upstream[0]!),
        message: { ...(payload(upstream[0]!).message as object), model: 'house/claude' },
      });
    },
  );

  it('does not re-serialise message_start when the model already matches', () => {
    const { upstream, frames } = pass('messages-text.sse', 'claude-sonnet-4-5-20250929');
    expect(frames).toEqual(upstream);
  });

  it('forwards unknown events unchanged and names frames that lacked an event: line', () => {
    const passthrough = createMessagesPassthrough({ model: 'm' });
    expect(passthrough.push({ event: 'brand_new', data: '{"type":"brand_new","x":1}' }).frames).toEqual([
      { event: 'brand_new', data: '{"type":"brand_new","x":1}' },
    ]);
    expect(passthrough.push({ data: '{"type":"ping"}' }).frames).toEqual([{ event: 'ping', data: '{"type":"ping"}' }]);
  });

  it('returns the neutral events of the upstream for accounting', () => {
    const { events } = pass('messages-tools.sse', 'house/claude');
    expect(events.map((e) => (e.type === 'start' ? { ...e, created: 0 } : e))).toEqual(
      upstreamEvents('messages-tools.sse').map((e) => (e.type === 'start' ? { ...e, created: 0 } : e)),
    );
  });

  it('an upstream error mid-stream is forwarded as it came and nothing follows', () => {
    const { upstream, frames } = pass('messages-error-midstream.sse', 'house/claude');
    expect(frames[frames.length - 1]).toEqual(upstream[3]);
    expect(frames).toHaveLength(4);
  });
});

describe('createMessagesPassthrough on text deltas that differ only in their text', () => {
  it('forwards them byte-identical with the events a full parse gives', () => {
    const texts = ['Hello', ' wor"ld\\\n', '', 'é 中 😀', '\u0001', '\ud800', 'end'];
    const delta = (text: string, spaced = false) => {
      const data = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
      return { event: 'content_block_delta', data: spaced ? data.replace('"index":', '"index": ') : data };
    };
    const start = {
      event: 'content_block_start',
      data: JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    };
    const upstream = [
      start,
      delta(''),
      ...texts.map((text) => delta(text)),
      delta('spaced', true),
      ...texts.map((text) => delta(text)),
    ];
    const passthrough = createMessagesPassthrough({ model: 'caller' });
    const parser = createMessagesStreamParser();
    for (const event of upstream)
      expect(passthrough.push(event)).toEqual({ frames: [event], events: parser.push(event) });
  });
});

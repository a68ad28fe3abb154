import { chatViolations, decode, fixture, payload, upstreamEvents } from '../__fixtures__/streams/replay';
import type { SseFrame, StreamEvent } from '../ir';
import { createChatPassthrough } from './stream-passthrough';

function pass(name: string, options: { model: string; includeUsage: boolean }) {
  const passthrough = createChatPassthrough(options);
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

describe('createChatPassthrough', () => {
  it('forwards chunks byte-identical when the model already matches and usage was asked for', () => {
    const { upstream, frames } = pass('chat-text.sse', { model: 'gpt-4.1-2025-04-14', includeUsage: true });
    expect(frames).toEqual(upstream);
  });

  it('writes the caller model over the upstream model and changes nothing else', () => {
    const { upstream, frames } = pass('chat-tools-parallel.sse', { model: 'house/fast', includeUsage: true });
    expect(chatViolations(frames, { model: 'house/fast', includeUsage: true })).toEqual([]);
    expect(frames.map((f) => (f.data === '[DONE]' ? f.data : { ...payload(f), model: 'x' }))).toEqual(upstream.map((f) => (f.data === '[DONE]' ? f.data : { ...payload(f), model: 'x' })));
  });

  it.each(['chat-text.sse', 'chat-tools-parallel.sse', 'chat-reasoning.sse', 'chat-fake-stream.sse'])(
    'a chat caller without include_usage never sees a usage chunk or usage field (%s)',
    (name) => {
      const { frames } = pass(name, { model: 'house/fast', includeUsage: false });
      expect(chatViolations(frames, { model: 'house/fast', includeUsage: false })).toEqual([]);
    },
  );

  it('a chat caller with include_usage sees exactly one usage chunk before [DONE]', () => {
    const { frames } = pass('chat-text.sse', { model: 'house/fast', includeUsage: true });
    expect(frames.filter((f) => f.data !== '[DONE]' && Array.isArray(payload(f).choices) && (payload(f).choices as unknown[]).length === 0)).toHaveLength(1);
  });

  it('returns the neutral events of the upstream for accounting', () => {
    const { events } = pass('chat-tools-parallel.sse', { model: 'house/fast', includeUsage: false });
    expect(events).toEqual(upstreamEvents('chat-tools-parallel.sse'));
  });

  it('an upstream error mid-stream is forwarded as it came and nothing follows', () => {
    const { upstream, frames, events } = pass('chat-error-midstream.sse', { model: 'house/fast', includeUsage: false });
    expect(frames[frames.length - 1]).toEqual(upstream[2]);
    expect(frames).toHaveLength(3);
    expect(events[events.length - 1]).toMatchObject({ type: 'error', error: { status: 500 } });
  });

  it('text that is not JSON becomes an OpenAI-shaped error', () => {
    const out = createChatPassthrough({ model: 'm', includeUsage: false }).push({ data: '{"id":' });
    expect(payload(out.frames[0]!)).toEqual({ error: expect.objectContaining({ type: 'server_error' }) });
  });
});

import { chatViolations, decode, fixture, payload, upstreamEvents } from '../__fixtures__/streams/replay';
import type { SseFrame, StreamEvent } from '../ir';
import { createChatStreamParser } from './stream-parser';
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
    expect(frames.map((f) => (f.data === '[DONE]' ? f.data : { ...payload(f), model: 'x' }))).toEqual(
      upstream.map((f) => (f.data === '[DONE]' ? f.data : { ...payload(f), model: 'x' })),
    );
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
    expect(
      frames.filter(
        (f) =>
          f.data !== '[DONE]' && Array.isArray(payload(f).choices) && (payload(f).choices as unknown[]).length === 0,
      ),
    ).toHaveLength(1);
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

describe('createChatPassthrough on text chunks that differ only in their text', () => {
  const texts = ['Hello', ' wor"ld\\\n', '', 'é 中 😀', '\u0001', '\ud800', '\u2028', 'end'];
  const chunk = (content: string, spaced = false) => {
    const data = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'up',
      choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
      usage: null,
      obfuscation: `p${content.length}`,
    });
    return { data: spaced ? data.replace('"created":', '"created": ') : data };
  };
  // What a full parse and serialisation of each chunk gives, as the passthrough did for every chunk before.
  const parsedAndWritten = (data: string, includeUsage: boolean) => {
    const value = JSON.parse(data) as Record<string, unknown>;
    value.model = 'caller';
    if (!includeUsage) delete value.usage;
    return JSON.stringify(value);
  };

  it.each([false, true])('give the bytes and events a full parse gives (include_usage %s)', (includeUsage) => {
    const upstream = [
      chunk(''),
      ...texts.map((text) => chunk(text)),
      chunk('spaced', true),
      ...texts.map((text) => chunk(text)),
    ];
    const passthrough = createChatPassthrough({ model: 'caller', includeUsage });
    const parser = createChatStreamParser();
    for (const event of upstream) {
      expect(passthrough.push(event)).toEqual({
        frames: [{ data: parsedAndWritten(event.data, includeUsage) }],
        events: parser.push(event),
      });
    }
  });

  it('forward chunks as they came when nothing in them changes', () => {
    const passthrough = createChatPassthrough({ model: 'up', includeUsage: true });
    for (const text of texts) expect(passthrough.push(chunk(text)).frames).toEqual([chunk(text)]);
  });
});

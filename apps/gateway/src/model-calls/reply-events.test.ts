import type { ChatResponse, StreamEvent } from '@sbc/dialects';
import { eventsOfReply, ReplyRecorder } from './reply-events';

const usage = { inputTokens: 12, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 };

const reply = (over: Partial<ChatResponse> = {}): ChatResponse => ({
  id: 'msg_1',
  model: 'sim',
  created: 1_700_000_000,
  content: [
    { type: 'reasoning', text: 'Thinking.', signature: 'sig', origin: 'anthropic' },
    { type: 'text', text: 'Hello there.' },
    { type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
  ],
  stopReason: 'tool_use',
  usage,
  ...over,
});

function recorded(events: StreamEvent[]): ChatResponse | undefined {
  const recorder = new ReplyRecorder();
  for (const event of events) recorder.push(event);
  return recorder.finished();
}

describe('ReplyRecorder', () => {
  it('assembles a stream of deltas into the reply they make', () => {
    const events: StreamEvent[] = [
      { type: 'start', id: 'chatcmpl-1', model: 'sim', created: 5, usage: { inputTokens: 3 } },
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'tool_call', index: 0, id: 'call_1', name: 'f' },
      { type: 'tool_arguments', index: 0, delta: '{"a"' },
      { type: 'tool_arguments', index: 0, delta: ':1}' },
      { type: 'stop', reason: 'tool_use' },
      { type: 'usage', usage: { outputTokens: 4 } },
      { type: 'end' },
    ];
    expect(recorded(events)).toEqual({
      id: 'chatcmpl-1',
      model: 'sim',
      created: 5,
      content: [
        { type: 'text', text: 'Hello' },
        { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
  });

  it('gives nothing for a stream that failed, had no stop reason or did not reach its end', () => {
    const start: StreamEvent = { type: 'start', id: 'x', model: 'sim', created: 5 };
    const text: StreamEvent = { type: 'text', text: 'Hi' };
    const stop: StreamEvent = { type: 'stop', reason: 'end_turn' };
    const failure: StreamEvent = { type: 'error', error: { status: 502, message: 'broke' } };
    expect(recorded([start, text, stop])).toBeUndefined();
    expect(recorded([start, text, { type: 'end' }])).toBeUndefined();
    expect(recorded([start, text, failure, stop, { type: 'end' }])).toBeUndefined();
  });

  it('reads back exactly the reply whose events it was given', () => {
    const original = reply({ stopSequence: undefined });
    delete original.stopSequence;
    expect(recorded(eventsOfReply(original))).toEqual(original);
    const redacted = reply({ content: [{ type: 'reasoning', text: '', redacted: 'opaque' }], stopReason: 'end_turn' });
    expect(recorded(eventsOfReply(redacted))).toEqual(redacted);
    const stopped = reply({ content: [{ type: 'text', text: 'a' }], stopReason: 'stop_sequence', stopSequence: '##' });
    expect(recorded(eventsOfReply(stopped))).toEqual(stopped);
  });
});

import { createChatStreamRenderer } from '../../chat/stream-renderer';
import type { SseFrame } from '../../ir';
import { createMessagesStreamRenderer } from '../../messages/stream-renderer';
import { createResponsesStreamRenderer } from '../../responses/stream-renderer';
import { chatViolations, messagesViolations, responsesViolations, translate } from './replay';

/** The invariant checks the stream tests lean on must fail on broken streams, or their passing means nothing. */

const edit = (frames: SseFrame[], index: number, change: (p: Record<string, unknown>) => void): SseFrame[] =>
  frames.map((f, i) => {
    if (i !== index) return f;
    const p = JSON.parse(f.data);
    change(p);
    return { ...f, data: JSON.stringify(p) };
  });

describe('stream invariant checks', () => {
  it('the chat check catches usage without include_usage, a missing [DONE] and a changed id', () => {
    const options = { model: 'm', includeUsage: false };
    const good = translate('chat-text.sse', createChatStreamRenderer(options));
    expect(chatViolations(good, options)).toEqual([]);
    expect(
      chatViolations(translate('chat-text.sse', createChatStreamRenderer({ model: 'm', includeUsage: true })), options),
    ).not.toEqual([]);
    expect(chatViolations(good.slice(0, -1), options)).not.toEqual([]);
    expect(
      chatViolations(
        edit(good, 1, (p) => (p.id = 'other')),
        options,
      ),
    ).not.toEqual([]);
  });

  it('the messages check catches a missing event line, overlapping blocks and a wrong stop reason', () => {
    const good = translate('messages-tools.sse', createMessagesStreamRenderer({ model: 'm' }));
    expect(messagesViolations(good)).toEqual([]);
    expect(messagesViolations(good.map((f, i) => (i === 3 ? { data: f.data } : f)))).not.toEqual([]);
    const stopAt = good.findIndex((f) => f.event === 'content_block_stop');
    expect(messagesViolations(good.filter((_, i) => i !== stopAt))).not.toEqual([]);
    const deltaAt = good.findIndex((f) => f.event === 'message_delta');
    expect(
      messagesViolations(edit(good, deltaAt, (p) => (p.delta = { stop_reason: 'end_turn', stop_sequence: null }))),
    ).not.toEqual([]);
  });

  it('the responses check catches a sequence gap, an unclosed item and output that differs from the items', () => {
    const good = translate('chat-tools-parallel.sse', createResponsesStreamRenderer({ model: 'm' }));
    expect(responsesViolations(good)).toEqual([]);
    expect(responsesViolations(good.filter((_, i) => i !== 4))).not.toEqual([]);
    const doneAt = good.map((f) => f.event).lastIndexOf('response.output_item.done');
    expect(responsesViolations(edit(good, doneAt, (p) => (p.output_index = 7)))).not.toEqual([]);
    expect(
      responsesViolations(edit(good, good.length - 1, (p) => ((p.response as { output: unknown[] }).output = []))),
    ).not.toEqual([]);
  });
});

import { parseUpstreamError } from '../error-bodies';
import { dialectId } from '../ids';
import type { AssistantBlock, ChatResponse } from '../ir';
import { isObject, objectOf, stringOf } from '../json';
import { settleStopReason, stopFromMessages } from '../stop-reasons';
import { stringifyToolInput } from '../tool-arguments';
import { mergeUsage, usageFromMessages, ZERO_USAGE } from '../usage';
import { UpstreamError } from '../upstream-error';

/**
 * A non-streaming Anthropic Message (dialects.md §4.3) into the neutral reply. Server-tool blocks are skipped:
 * the gateway routes no server tools, and no other dialect could show them. Throws an `UpstreamError`
 * (`bad_reply`) for an error body or a body without content.
 */
export function parseMessagesResponse(body: unknown): ChatResponse {
  if (!isObject(body) || body.type === 'error' || isObject(body.error))
    throw new UpstreamError('bad_reply', parseUpstreamError(502, body));
  if (!Array.isArray(body.content)) {
    throw new UpstreamError('bad_reply', {
      status: 502,
      message: 'The upstream reply has no content.',
      code: null,
      param: null,
    });
  }
  const content: AssistantBlock[] = [];
  let toolCalls = 0;
  for (const raw of body.content) {
    if (!isObject(raw)) continue;
    switch (raw.type) {
      case 'text':
        if (typeof raw.text === 'string' && raw.text !== '') content.push({ type: 'text', text: raw.text });
        break;
      case 'thinking': {
        const signature = stringOf(raw.signature);
        const text = stringOf(raw.thinking) ?? '';
        content.push(
          signature
            ? { type: 'reasoning', text, signature, origin: 'anthropic' }
            : { type: 'reasoning', text, origin: 'anthropic' },
        );
        break;
      }
      case 'redacted_thinking':
        if (typeof raw.data === 'string')
          content.push({ type: 'reasoning', text: '', redacted: raw.data, origin: 'anthropic' });
        break;
      case 'tool_use':
        content.push({
          type: 'tool_call',
          id: stringOf(raw.id) || dialectId('toolu_'),
          name: stringOf(raw.name) ?? '',
          arguments: stringifyToolInput(raw.input),
        });
        toolCalls++;
        break;
    }
  }
  const response: ChatResponse = {
    id: stringOf(body.id) || dialectId('msg_'),
    model: stringOf(body.model) ?? '',
    // Anthropic replies carry no timestamp.
    created: Math.floor(Date.now() / 1000),
    content,
    stopReason: settleStopReason(stopFromMessages(body.stop_reason), toolCalls > 0),
    usage: mergeUsage(ZERO_USAGE, usageFromMessages(objectOf(body.usage))),
  };
  const stopSequence = stringOf(body.stop_sequence);
  if (stopSequence !== undefined) response.stopSequence = stopSequence;
  return response;
}

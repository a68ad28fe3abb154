import type { CallerDialect, CallerStream, Passthrough } from '../adapter';
import { renderErrorBody } from '../error-bodies';
import type { SseFrame } from '../ir';
import { checkFallbackModels, withoutFallbackModels } from '../fallback-models';
import { countOf } from '../json';
import { messagesAsksForMcp } from '../mcp-tools';
import type { DialectIssue } from '../request-error';
import { parseData } from '../stream';
import { stopFromMessages } from '../stop-reasons';
import { messagesStreamError } from '../stream-errors';
import { mergeUsage, usageFromMessages, ZERO_USAGE } from '../usage';
import { parseMessagesRequest } from './parse-request';
import { renderMessagesResponse } from './render-response';
import { createMessagesPassthrough } from './stream-passthrough';
import { createMessagesStreamRenderer } from './stream-renderer';
import { anthropicTokenLimitHeaders } from '../token-limit-headers';

/** A Messages caller on an Anthropic upstream: events pass through (createMessagesPassthrough). */
function messagesPassthroughStream(options: { model: string; requestId: string }): CallerStream {
  const passthrough = createMessagesPassthrough({ model: options.model });
  // The content block left open when the stream is cut must be closed before the message ends.
  let openBlock: number | undefined;
  return {
    push(event) {
      if (event.event === 'content_block_start')
        openBlock = (parseData(event.data) as { index?: number } | undefined)?.index;
      else if (event.event === 'content_block_stop') openBlock = undefined;
      return passthrough.push(event);
    },
    textTemplate: () => passthrough.textTemplate(),
    fail: (failure) => [{ event: 'error', data: messagesStreamError(failure, options.requestId) }],
    cut(usage) {
      const frames: SseFrame[] = [];
      if (typeof openBlock === 'number') {
        frames.push({
          event: 'content_block_stop',
          data: JSON.stringify({ type: 'content_block_stop', index: openBlock }),
        });
      }
      const delta = {
        type: 'message_delta',
        delta: { stop_reason: 'max_tokens', stop_sequence: null },
        usage: { output_tokens: usage.outputTokens },
      };
      frames.push(
        { event: 'message_delta', data: JSON.stringify(delta) },
        { event: 'message_stop', data: JSON.stringify({ type: 'message_stop' }) },
      );
      return frames;
    },
  };
}

const messagesPassthrough: Passthrough = {
  upstream: 'anthropic',
  // Messages callers always name max_tokens, so the body needs only the engine's model.
  request: (body, { model }) => withoutFallbackModels({ ...body, model }),
  reply(raw, model) {
    raw.model = model;
    const stopReason = stopFromMessages(raw.stop_reason);
    return { body: raw, usage: mergeUsage(ZERO_USAGE, usageFromMessages(raw.usage)), stopReason };
  },
  stream: messagesPassthroughStream,
};

export const MESSAGES: CallerDialect = {
  name: 'messages',
  modelKind: 'chat',
  outputLimitFields: ['max_tokens'],
  nullOutputLimit: false,
  check(body) {
    const issues: DialectIssue[] = checkFallbackModels(body);
    if (!Array.isArray(body.messages))
      issues.push({ path: 'messages', code: 'required', message: 'messages must be an array.' });
    if (body.max_tokens === undefined)
      issues.push({ path: 'max_tokens', code: 'required', message: 'max_tokens is required.' });
    return issues;
  },
  requestedOutputLimit: (body) => countOf(body.max_tokens),
  includeUsage: () => false,
  parse: parseMessagesRequest,
  renderReply: (reply) => renderMessagesResponse(reply),
  streamRenderer: (options) => createMessagesStreamRenderer({ model: options.model }),
  errorBody: (failure, requestId) => renderErrorBody('messages', failure, requestId),
  overloadStatus: 529,
  // The Anthropic SDK reads `request-id`, the OpenAI SDK `x-request-id`.
  tokenLimitHeaders: anthropicTokenLimitHeaders,
  requestIdHeaders: (requestId) => ({ 'x-request-id': requestId, 'request-id': requestId }),
  passthrough: messagesPassthrough,
  asksForMcp: messagesAsksForMcp,
};

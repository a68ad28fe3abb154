import type { CallerDialect, CallerStream, Passthrough } from '../adapter';
import { renderErrorBody } from '../error-bodies';
import { dialectId } from '../ids';
import type { SseFrame, StreamEvent } from '../ir';
import { checkFallbackModels, withoutFallbackModels } from '../fallback-models';
import { countOf, isObject } from '../json';
import type { DialectIssue } from '../request-error';
import { nowSeconds } from '../stream';
import { stopFromChat } from '../stop-reasons';
import { chatStreamError } from '../stream-errors';
import { mergeUsage, usageFromChat, ZERO_USAGE } from '../usage';
import { parseChatRequest } from './parse-request';
import { renderChatResponse } from './render-response';
import { createChatPassthrough } from './stream-passthrough';
import { createChatStreamRenderer } from './stream-renderer';
import { openAiTokenLimitHeaders } from '../token-limit-headers';

const OUTPUT_LIMIT_FIELDS = ['max_tokens', 'max_completion_tokens'] as const;

/**
 * A passed-through reply gains the fields OpenAI's document requires of every choice and an OpenAI-compatible
 * server may leave out: strict clients validate the reply against that document.
 */
function completeChoices(body: Record<string, unknown>): void {
  if (!Array.isArray(body.choices)) return;
  for (const choice of body.choices) {
    if (!isObject(choice)) continue;
    if (!('logprobs' in choice)) choice.logprobs = null;
    const message = choice.message;
    if (!isObject(message)) continue;
    if (!('content' in message)) message.content = null;
    if (!('refusal' in message)) message.refusal = null;
  }
}

/**
 * A chat caller on a chat upstream: chunks pass through (createChatPassthrough); the edge's own ends are chunks too.
 */
function chatPassthroughStream(options: { model: string; includeUsage: boolean; requestId: string }): CallerStream {
  const passthrough = createChatPassthrough({ model: options.model, includeUsage: options.includeUsage });
  let start: Extract<StreamEvent, { type: 'start' }> | undefined;
  return {
    push(event) {
      const pushed = passthrough.push(event);
      if (!start) start = pushed.events.find((item) => item.type === 'start');
      return pushed;
    },
    textTemplate: () => passthrough.textTemplate(),
    fail: (failure) => [{ data: chatStreamError(failure, options.requestId) }],
    cut(usage) {
      const chunk = {
        id: start?.id || dialectId('chatcmpl-'),
        object: 'chat.completion.chunk',
        created: start?.created ?? nowSeconds(),
        model: options.model,
      };
      const frames: SseFrame[] = [
        { data: JSON.stringify({ ...chunk, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }) },
      ];
      if (options.includeUsage) {
        const tokens = {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
        };
        frames.push({ data: JSON.stringify({ ...chunk, choices: [], usage: tokens }) });
      }
      frames.push({ data: '[DONE]' });
      return frames;
    },
  };
}

const chatPassthrough: Passthrough = {
  upstream: 'openai',
  request(body, { model, outputLimit, stream }) {
    // A literal that begins with a key of its own and then copies the body keeps its hidden class as keys are added
    // below (the limit, the stream's options); one that begins as a spread copy (`{ ...body, model }`) would get a
    // new one on every call on Node 20. Copied as spread copies (a `__proto__` key stays a key), then the engine's
    // model put over the caller's.
    const sent: Record<string, unknown> = { model, ...body };
    sent.model = model;
    // A caller that set no limit is held to the one its call was admitted under.
    if (outputLimit !== undefined && requestedOutputLimit(body) === undefined) sent.max_completion_tokens = outputLimit;
    // Usage is always asked of the upstream; the caller's own choice decides only what it sees.
    if (stream)
      sent.stream_options = { ...(isObject(body.stream_options) ? body.stream_options : {}), include_usage: true };
    return withoutFallbackModels(sent);
  },
  reply(raw, model) {
    raw.model = model;
    completeChoices(raw);
    const first = Array.isArray(raw.choices) && isObject(raw.choices[0]) ? raw.choices[0] : undefined;
    const stopReason = stopFromChat(first?.finish_reason);
    return { body: raw, usage: mergeUsage(ZERO_USAGE, usageFromChat(raw.usage)), stopReason };
  },
  stream: chatPassthroughStream,
};

function requestedOutputLimit(body: Readonly<Record<string, unknown>>): number | undefined {
  return countOf(body.max_completion_tokens ?? body.max_tokens);
}

export const CHAT: CallerDialect = {
  name: 'chat',
  modelKind: 'chat',
  outputLimitFields: OUTPUT_LIMIT_FIELDS,
  nullOutputLimit: true,
  check(body) {
    const issues: DialectIssue[] = checkFallbackModels(body);
    if (!Array.isArray(body.messages))
      issues.push({ path: 'messages', code: 'required', message: 'messages must be an array.' });
    return issues;
  },
  requestedOutputLimit,
  includeUsage: (body) => isObject(body.stream_options) && body.stream_options.include_usage === true,
  parse: parseChatRequest,
  renderReply: (reply) => renderChatResponse(reply),
  streamRenderer: (options) => createChatStreamRenderer({ model: options.model, includeUsage: options.includeUsage }),
  errorBody: (failure, requestId) => renderErrorBody('chat', failure, requestId),
  overloadStatus: 503,
  tokenLimitHeaders: openAiTokenLimitHeaders,
  requestIdHeaders: (requestId) => ({ 'x-request-id': requestId }),
  passthrough: chatPassthrough,
};

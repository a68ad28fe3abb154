import { parseUpstreamError } from '../error-bodies';
import { dialectId } from '../ids';
import type { AssistantBlock, ChatResponse } from '../ir';
import { isObject, numberOf, objectOf, stringOf } from '../json';
import { settleStopReason, stopFromChat } from '../stop-reasons';
import { mergeUsage, usageFromChat, ZERO_USAGE } from '../usage';
import { UpstreamError } from '../upstream-error';

/**
 * A non-streaming chat-completions body (dialects.md §2.3) into the neutral reply; the first choice only, as
 * the gateway always asks for one. Throws an `UpstreamError` (`bad_reply`) when the body is an error or has no
 * choices.
 */
export function parseChatResponse(body: unknown): ChatResponse {
  if (!isObject(body) || (body.error !== undefined && body.error !== null))
    throw new UpstreamError('bad_reply', parseUpstreamError(502, body));
  if (!Array.isArray(body.choices)) {
    throw new UpstreamError('bad_reply', {
      status: 502,
      message: 'The upstream reply has no choices.',
      code: null,
      param: null,
    });
  }
  const choice = objectOf(body.choices[0]);
  const message = objectOf(choice.message);
  const content: AssistantBlock[] = [];

  // Non-standard reasoning text: DeepSeek and older vLLM say `reasoning_content`, newer vLLM and OpenRouter
  // `reasoning`.
  const reasoning = stringOf(message.reasoning_content) || stringOf(message.reasoning);
  if (reasoning) content.push({ type: 'reasoning', text: reasoning, origin: 'openai' });

  if (typeof message.content === 'string') {
    if (message.content !== '') content.push({ type: 'text', text: message.content });
  } else if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (!isObject(part)) continue;
      if (part.type === 'text' && typeof part.text === 'string' && part.text !== '')
        content.push({ type: 'text', text: part.text });
      if (part.type === 'refusal' && typeof part.refusal === 'string' && part.refusal !== '')
        content.push({ type: 'refusal', text: part.refusal });
    }
  }
  const refusal = stringOf(message.refusal);
  if (refusal) content.push({ type: 'refusal', text: refusal });

  let toolCalls = 0;
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const fn = objectOf(objectOf(call).function);
      const name = stringOf(fn.name);
      if (!name) continue;
      const args =
        typeof fn.arguments === 'string'
          ? fn.arguments
          : fn.arguments === undefined || fn.arguments === null
            ? ''
            : JSON.stringify(fn.arguments);
      // A few servers leave out call ids; the caller still needs one to answer the call with.
      content.push({ type: 'tool_call', id: stringOf(objectOf(call).id) || dialectId('call_'), name, arguments: args });
      toolCalls++;
    }
  }

  const response: ChatResponse = {
    id: stringOf(body.id) || dialectId('chatcmpl-'),
    model: stringOf(body.model) ?? '',
    created: numberOf(body.created) ?? Math.floor(Date.now() / 1000),
    content,
    stopReason: settleStopReason(stopFromChat(choice.finish_reason), toolCalls > 0),
    usage: mergeUsage(ZERO_USAGE, usageFromChat(body.usage)),
  };
  // vLLM names the stop string that matched in a non-standard `stop_reason`.
  if (choice.finish_reason === 'stop' && typeof choice.stop_reason === 'string' && response.stopReason === 'end_turn') {
    response.stopReason = 'stop_sequence';
    response.stopSequence = choice.stop_reason;
  }
  return response;
}

import { dialectId } from '../ids';
import type { StreamEvent } from '../ir';
import { isObject, numberOf, objectOf, stringOf } from '../json';
import { stopFromChat } from '../stop-reasons';
import { malformedStreamEvent, nowSeconds, parseData, type UpstreamStreamParser } from '../stream';
import { failureFromChatError } from '../stream-errors';
import { usageFromChat } from '../usage';

/** The chat parser also takes payloads already parsed, so the passthrough parses each chunk once. */
export interface ChatStreamParser extends UpstreamStreamParser {
  /** `payload` is the parsed `data:` JSON; `event` the SSE event name, if the frame had one. */
  pushPayload(payload: unknown, event?: string): StreamEvent[];
}

export const DONE = '[DONE]';

/**
 * OpenAI chat-completions chunks (dialects.md §2.4) into neutral events. Only choice 0 is read: the gateway
 * never asks for `n > 1`. After `[DONE]` or an error nothing more is emitted, and content after the
 * `finish_reason` is ignored (the caller was already told the reply ended). The stop reason is passed on
 * as the upstream said it; renderers settle it against the tool calls they actually emitted.
 */
export function createChatStreamParser(): ChatStreamParser {
  let started = false;
  let stopped = false;
  let finished = false;
  /** Chat `tool_calls[].index` → the call's dense counter and id (to notice a new call reusing an index). */
  const calls = new Map<number, { index: number; id: string }>();
  let nextCall = 0;

  function toolCalls(list: unknown[], out: StreamEvent[]): void {
    for (let position = 0; position < list.length; position++) {
      const call = list[position];
      if (!isObject(call)) continue;
      const fn = objectOf(call.function);
      // Some servers (Gemini's compatible API) leave out `index`: a call's place in the list stands in.
      const chatIndex = numberOf(call.index) ?? position;
      const id = stringOf(call.id);
      let known = calls.get(chatIndex);
      // A new id at a used index is a new call from a server that numbers every chunk from 0; arguments
      // for an index never announced still start a call, so they are not lost.
      if (!known || (id && id !== known.id)) {
        known = { index: nextCall++, id: id || dialectId('call_') };
        calls.set(chatIndex, known);
        out.push({ type: 'tool_call', index: known.index, id: known.id, name: stringOf(fn.name) ?? '' });
      }
      const args = stringOf(fn.arguments);
      if (args) out.push({ type: 'tool_arguments', index: known.index, delta: args });
    }
  }

  function pushPayload(payload: unknown, event?: string): StreamEvent[] {
    if (finished) return [];
    if (!isObject(payload)) {
      finished = true;
      return [malformedStreamEvent()];
    }
    if (event === 'error' || (payload.error !== undefined && payload.error !== null)) {
      finished = true;
      return [{ type: 'error', error: failureFromChatError(payload) }];
    }
    const out: StreamEvent[] = [];
    if (!started) {
      started = true;
      out.push({
        type: 'start',
        id: stringOf(payload.id) ?? '',
        model: stringOf(payload.model) ?? '',
        created: numberOf(payload.created) ?? nowSeconds(),
      });
    }
    const choice = Array.isArray(payload.choices) ? payload.choices[0] : undefined;
    if (isObject(choice) && !stopped) {
      const delta = objectOf(choice.delta);
      // vLLM sent both names with the same text while renaming `reasoning_content` to `reasoning`.
      const reasoning = stringOf(delta.reasoning_content) || stringOf(delta.reasoning);
      if (reasoning) out.push({ type: 'reasoning', text: reasoning });
      const text = stringOf(delta.content);
      if (text) out.push({ type: 'text', text });
      const refusal = stringOf(delta.refusal);
      if (refusal) out.push({ type: 'refusal', text: refusal });
      if (Array.isArray(delta.tool_calls)) toolCalls(delta.tool_calls, out);
      // Content first, then the stop: fake-streaming servers put both in one chunk.
      const finish = stringOf(choice.finish_reason);
      if (finish) {
        stopped = true;
        out.push({ type: 'stop', reason: stopFromChat(finish) });
      }
    }
    if (isObject(payload.usage)) out.push({ type: 'usage', usage: usageFromChat(payload.usage) });
    return out;
  }

  return {
    pushPayload,
    push(event) {
      if (finished) return [];
      const data = event.data.trim();
      if (data === DONE) {
        finished = true;
        return [{ type: 'end' }];
      }
      // An empty `data:` is a keep-alive some proxies send.
      if (data === '') return [];
      return pushPayload(parseData(data), event.event);
    },
  };
}

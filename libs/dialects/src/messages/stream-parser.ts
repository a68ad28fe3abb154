import { dialectId } from '../ids';
import type { StreamEvent } from '../ir';
import { isObject, objectOf, stringOf } from '../json';
import { stopFromMessages } from '../stop-reasons';
import { malformedStreamEvent, nowSeconds, parseData, type UpstreamStreamParser } from '../stream';
import { failureFromMessagesError } from '../stream-errors';
import { usageFromMessages } from '../usage';

/** The Messages parser also takes payloads already parsed, so the passthrough parses each event once. */
export interface MessagesStreamParser extends UpstreamStreamParser {
  /** `name` is the SSE event name (or the payload's `type` when the frame had no `event:` line). */
  pushPayload(name: string, payload: unknown): StreamEvent[];
}

/**
 * Anthropic Messages stream events (dialects.md §4.4) into neutral events. Dispatch is on the SSE event
 * name, as the Anthropic SDK does, falling back to the payload's `type` for proxies that drop the
 * `event:` line. Block starts and stops carry no neutral event: renderers derive blocks from the runs.
 * `ping`, citations, server-tool blocks and unknown events have no neutral form and yield nothing.
 */
export function createMessagesStreamParser(): MessagesStreamParser {
  let finished = false;
  /** Block index → the tool call counter of a tool_use block (other blocks are not tracked). */
  const toolBlocks = new Map<number, number>();
  let nextCall = 0;

  function blockStart(payload: Record<string, unknown>, out: StreamEvent[]): void {
    const block = objectOf(payload.content_block);
    switch (block.type) {
      case 'text': {
        const text = stringOf(block.text);
        if (text) out.push({ type: 'text', text });
        return;
      }
      case 'thinking': {
        const text = stringOf(block.thinking);
        if (text) out.push({ type: 'reasoning', text });
        return;
      }
      case 'redacted_thinking':
        out.push({ type: 'reasoning_redacted', data: stringOf(block.data) ?? '' });
        return;
      case 'tool_use': {
        const index = nextCall++;
        toolBlocks.set(typeof payload.index === 'number' ? payload.index : -1, index);
        out.push({
          type: 'tool_call',
          index,
          id: stringOf(block.id) || dialectId('toolu_'),
          name: stringOf(block.name) ?? '',
        });
        // The API starts with `input: {}` and streams the JSON; a proxy that sends the whole input here
        // would otherwise lose it.
        if (isObject(block.input) && Object.keys(block.input).length > 0) {
          out.push({ type: 'tool_arguments', index, delta: JSON.stringify(block.input) });
        }
        return;
      }
    }
  }

  function blockDelta(payload: Record<string, unknown>, out: StreamEvent[]): void {
    const delta = objectOf(payload.delta);
    switch (delta.type) {
      case 'text_delta': {
        const text = stringOf(delta.text);
        if (text) out.push({ type: 'text', text });
        return;
      }
      case 'thinking_delta': {
        const text = stringOf(delta.thinking);
        if (text) out.push({ type: 'reasoning', text });
        return;
      }
      case 'signature_delta': {
        const signature = stringOf(delta.signature);
        if (signature) out.push({ type: 'reasoning_signature', signature, origin: 'anthropic' });
        return;
      }
      case 'input_json_delta': {
        const json = stringOf(delta.partial_json);
        const index = toolBlocks.get(typeof payload.index === 'number' ? payload.index : -1);
        if (json && index !== undefined) out.push({ type: 'tool_arguments', index, delta: json });
        return;
      }
    }
  }

  function pushPayload(name: string, payload: unknown): StreamEvent[] {
    if (finished) return [];
    if (!isObject(payload)) {
      finished = true;
      return [malformedStreamEvent()];
    }
    const out: StreamEvent[] = [];
    switch (name) {
      case 'message_start': {
        const message = objectOf(payload.message);
        out.push({
          type: 'start',
          id: stringOf(message.id) ?? '',
          model: stringOf(message.model) ?? '',
          created: nowSeconds(),
          usage: usageFromMessages(message.usage),
        });
        break;
      }
      case 'content_block_start':
        blockStart(payload, out);
        break;
      case 'content_block_delta':
        blockDelta(payload, out);
        break;
      case 'message_delta': {
        // Usage first: it is cumulative and the stop that follows is what renderers hold on to.
        if (isObject(payload.usage)) out.push({ type: 'usage', usage: usageFromMessages(payload.usage) });
        const delta = objectOf(payload.delta);
        if (delta.stop_reason != null) {
          const stopSequence = stringOf(delta.stop_sequence);
          out.push(
            stopSequence === undefined
              ? { type: 'stop', reason: stopFromMessages(delta.stop_reason) }
              : { type: 'stop', reason: stopFromMessages(delta.stop_reason), stopSequence },
          );
        }
        break;
      }
      case 'message_stop':
        finished = true;
        out.push({ type: 'end' });
        break;
      case 'error':
        finished = true;
        out.push({ type: 'error', error: failureFromMessagesError(payload) });
        break;
    }
    return out;
  }

  return {
    pushPayload,
    push(event) {
      if (finished || event.data.trim() === '') return [];
      const payload = parseData(event.data);
      return pushPayload(event.event ?? stringOf(objectOf(payload).type) ?? '', payload);
    },
  };
}

import { dialectId } from '../ids';
import type { SseFrame, StopReason, StreamEvent, Usage } from '../ir';
import { chatFinishReason, settleStopReason } from '../stop-reasons';
import { callerId, nowSeconds, type StreamRenderer } from '../stream';
import { chatStreamError } from '../stream-errors';
import { chatUsage, mergeUsage, ZERO_USAGE } from '../usage';
import { DONE } from './stream-parser';

export interface ChatStreamRendererOptions {
  /** The model id the caller asked for; every chunk shows it instead of the upstream's. */
  model: string;
  /** The caller set `stream_options.include_usage`. */
  includeUsage: boolean;
}

/**
 * Neutral events into chat-completion chunks (dialects.md §2.4, §7). Each chunk is built from a prefix
 * fixed at the first event (`id`, `created`, `model` never change) plus the choice, so a text delta costs
 * one small `JSON.stringify`.
 *
 * The stop is held until `end` because usage follows it; content arriving after the stop is dropped, as a
 * chat client has already been told the choice finished. After `end` or `error` nothing more is written.
 */
/** A chunk's text around its delta and its finish reason, after the fixed head. */
const CHOICE_OPEN = '"choices":[{"index":0,"delta":';
const CHOICE_FINISH = ',"logprobs":null,"finish_reason":';

export function createChatStreamRenderer(options: ChatStreamRendererOptions): StreamRenderer {
  const model = JSON.stringify(options.model);
  const tail = options.includeUsage ? ',"usage":null}' : '}';
  let head = '';
  let started = false;
  let finished = false;
  let held: { reason: StopReason } | undefined;
  let usage: Usage = ZERO_USAGE;
  let toolCalls = 0;
  /** Calls that have had no argument text yet: they get `{}` before the finish, since clients parse it. */
  const bare = new Set<number>();
  let stopReason: StopReason | undefined;

  const chunk = (delta: unknown, finish: string | null = null): SseFrame => {
    const finishJson = finish === null ? 'null' : JSON.stringify(finish);
    return { data: `${head}${CHOICE_OPEN}${JSON.stringify(delta)}${CHOICE_FINISH}${finishJson}}]${tail}` };
  };

  function begin(upstreamId: string, created: number, out: SseFrame[]): void {
    started = true;
    const id = callerId('chatcmpl-', upstreamId);
    head = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${model},`;
    out.push(chunk({ role: 'assistant', content: '', refusal: null }));
  }

  function finish(out: SseFrame[]): void {
    for (const index of bare) out.push(chunk({ tool_calls: [{ index, function: { arguments: '{}' } }] }));
    stopReason = settleStopReason(held?.reason ?? 'end_turn', toolCalls > 0);
    out.push(chunk({}, chatFinishReason(stopReason)));
    if (options.includeUsage) out.push({ data: `${head}"choices":[],"usage":${JSON.stringify(chatUsage(usage))}}` });
    out.push({ data: DONE });
  }

  function render(event: StreamEvent): SseFrame[] {
    if (finished) return [];
    const out: SseFrame[] = [];
    if (event.type === 'start') {
      if (event.usage) usage = mergeUsage(usage, event.usage);
      if (!started) begin(event.id, event.created, out);
      return out;
    }
    if (event.type === 'error') {
      finished = true;
      out.push({ data: chatStreamError(event.error) });
      return out;
    }
    if (event.type === 'usage') {
      usage = mergeUsage(usage, event.usage);
      return out;
    }
    if (!started) begin('', nowSeconds(), out);
    switch (event.type) {
      case 'stop':
        held ??= { reason: event.reason };
        return out;
      case 'end':
        finished = true;
        finish(out);
        return out;
    }
    if (held) return out;
    switch (event.type) {
      case 'text':
        out.push(chunk({ content: event.text }));
        break;
      case 'reasoning':
        // Non-standard but what DeepSeek, vLLM and most chat clients that show reasoning read.
        out.push(chunk({ reasoning_content: event.text }));
        break;
      case 'refusal':
        out.push(chunk({ refusal: event.text }));
        break;
      case 'tool_call':
        toolCalls++;
        bare.add(event.index);
        out.push(
          chunk({
            tool_calls: [
              {
                index: event.index,
                id: event.id || dialectId('call_'),
                type: 'function',
                function: { name: event.name, arguments: '' },
              },
            ],
          }),
        );
        break;
      case 'tool_arguments':
        bare.delete(event.index);
        out.push(chunk({ tool_calls: [{ index: event.index, function: { arguments: event.delta } }] }));
        break;
      // Signatures and redacted thinking have no chat form.
    }
    return out;
  }

  return {
    render,
    summary: () => (stopReason === undefined ? { toolCalls, usage } : { toolCalls, stopReason, usage }),
  };
}

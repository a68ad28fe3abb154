import { dialectId, sanitizeToolId } from '../ids';
import type { SseFrame, StopReason, StreamEvent, Usage } from '../ir';
import { messagesStopReason, settleStopReason } from '../stop-reasons';
import { callerId, type StreamRenderer } from '../stream';
import { messagesStreamError } from '../stream-errors';
import { mergeUsage, messagesUsage, ZERO_USAGE } from '../usage';
import { mcpBlocks } from './mcp-blocks';

export interface MessagesStreamRendererOptions {
  /** The model id the caller asked for, shown in `message_start` instead of the upstream's. */
  model: string;
}

type OpenBlock =
  | { kind: 'text'; index: number }
  /** `signed`: the signature arrived, so the next reasoning delta belongs to a new thinking block. */
  | { kind: 'thinking'; index: number; signed: boolean }
  | { kind: 'tool'; index: number; call: number };

/** Every frame names its event: the Anthropic SDK drops frames without an `event:` line (dialects.md §1). */
const frame = (event: string, payload: Record<string, unknown>): SseFrame => ({
  event,
  data: JSON.stringify({ type: event, ...payload }),
});

/**
 * Neutral events into Anthropic Messages stream events (dialects.md §4.4, §6.8). Exactly one block is open
 * at a time and indices are dense from 0, so every `content_block_start` gets one `content_block_stop`; a
 * block is opened by the first delta that needs it, never in advance, so a tool-only answer starts its
 * `tool_use` at index 0.
 *
 * Arguments for a call whose block is already closed (an upstream streaming parallel calls interleaved)
 * are dropped: Anthropic blocks cannot reopen, and holding every call open would mean buffering whole
 * replies. Content after the stop is dropped too. `message_delta` waits for `end`, because an OpenAI
 * upstream sends its usage after `finish_reason`.
 */
export function createMessagesStreamRenderer(options: MessagesStreamRendererOptions): StreamRenderer {
  let started = false;
  let finished = false;
  let open: OpenBlock | undefined;
  let nextIndex = 0;
  let held: { reason: StopReason; stopSequence?: string } | undefined;
  let usage: Usage = ZERO_USAGE;
  let toolCalls = 0;
  let stopReason: StopReason | undefined;

  function begin(upstreamId: string, out: SseFrame[]): void {
    started = true;
    const message = {
      id: callerId('msg_', upstreamId),
      type: 'message',
      role: 'assistant',
      model: options.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: messagesUsage(usage, 'standard'),
    };
    out.push(frame('message_start', { message }), frame('ping', {}));
  }

  function close(out: SseFrame[]): void {
    if (!open) return;
    out.push(frame('content_block_stop', { index: open.index }));
    open = undefined;
  }

  /** Opens a block of `kind` unless one is already open and still takes deltas. */
  function ensure(kind: 'text' | 'thinking', out: SseFrame[]): number {
    if (open && open.kind === kind && !(open.kind === 'thinking' && open.signed)) return open.index;
    close(out);
    const index = nextIndex++;
    if (kind === 'text') {
      open = { kind, index };
      out.push(frame('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    } else {
      open = { kind, index, signed: false };
      out.push(
        frame('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      );
    }
    return index;
  }

  function content(event: StreamEvent, out: SseFrame[]): void {
    switch (event.type) {
      case 'text':
      // Messages has no refusal block; the refusal text is the answer, and the stop reason says `refusal`.
      case 'refusal': {
        const index = ensure('text', out);
        out.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text: event.text } }));
        return;
      }
      case 'reasoning': {
        const index = ensure('thinking', out);
        out.push(frame('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: event.text } }));
        return;
      }
      case 'reasoning_signature': {
        // Another vendor's proof would fail Anthropic's signature check when the caller replays it.
        if (event.origin !== 'anthropic') return;
        const index = ensure('thinking', out);
        out.push(
          frame('content_block_delta', { index, delta: { type: 'signature_delta', signature: event.signature } }),
        );
        if (open?.kind === 'thinking') open.signed = true;
        return;
      }
      case 'reasoning_redacted': {
        close(out);
        const index = nextIndex++;
        out.push(
          frame('content_block_start', { index, content_block: { type: 'redacted_thinking', data: event.data } }),
          frame('content_block_stop', { index }),
        );
        return;
      }
      case 'tool_call': {
        close(out);
        toolCalls++;
        const index = nextIndex++;
        open = { kind: 'tool', index, call: event.index };
        const id = sanitizeToolId(event.id || dialectId('toolu_'));
        out.push(
          frame('content_block_start', { index, content_block: { type: 'tool_use', id, name: event.name, input: {} } }),
        );
        return;
      }
      case 'mcp':
        // Whole blocks, as Anthropic starts a block it already knows in full; no delta follows.
        close(out);
        for (const block of mcpBlocks(event.item)) {
          const index = nextIndex++;
          out.push(
            frame('content_block_start', { index, content_block: block }),
            frame('content_block_stop', { index }),
          );
        }
        return;
      case 'tool_arguments':
        if (open?.kind === 'tool' && open.call === event.index) {
          out.push(
            frame('content_block_delta', {
              index: open.index,
              delta: { type: 'input_json_delta', partial_json: event.delta },
            }),
          );
        }
        return;
    }
  }

  function finish(out: SseFrame[]): void {
    close(out);
    stopReason = settleStopReason(held?.reason ?? 'end_turn', toolCalls > 0);
    const stopSequence = stopReason === 'stop_sequence' ? (held?.stopSequence ?? null) : null;
    out.push(
      frame('message_delta', {
        delta: { stop_reason: messagesStopReason(stopReason), stop_sequence: stopSequence },
        usage: messagesUsage(usage),
      }),
      frame('message_stop', {}),
    );
  }

  function render(event: StreamEvent): SseFrame[] {
    if (finished) return [];
    const out: SseFrame[] = [];
    switch (event.type) {
      case 'start':
        if (event.usage) usage = mergeUsage(usage, event.usage);
        if (!started) begin(event.id, out);
        return out;
      case 'error':
        finished = true;
        out.push({ event: 'error', data: messagesStreamError(event.error) });
        return out;
      case 'usage':
        usage = mergeUsage(usage, event.usage);
        return out;
    }
    if (!started) begin('', out);
    switch (event.type) {
      case 'stop':
        if (!held) {
          held =
            event.stopSequence === undefined
              ? { reason: event.reason }
              : { reason: event.reason, stopSequence: event.stopSequence };
          close(out);
        }
        return out;
      case 'end':
        finished = true;
        finish(out);
        return out;
    }
    if (!held) content(event, out);
    return out;
  }

  return {
    render,
    summary: () => (stopReason === undefined ? { toolCalls, usage } : { toolCalls, stopReason, usage }),
  };
}

import { dialectId } from '../ids';
import type {
  ChatRequest,
  DeclaredTool,
  McpItem,
  SseFrame,
  StopReason,
  StreamEvent,
  UpstreamDialect,
  Usage,
} from '../ir';
import { responsesStatus, settleStopReason } from '../stop-reasons';
import { callerId, nowSeconds, type StreamRenderer } from '../stream';
import { responsesErrorCode } from '../stream-errors';
import { declaredTools } from '../tool-names';
import { mergeUsage, ZERO_USAGE } from '../usage';
import { mcpOutputItem } from './mcp-items';
import { encryptedContentOf } from './reasoning-carrier';
import { responsesObject, type ResponsesObjectInput } from './response-object';
import { callItem, callItemId } from './tool-call-items';

export interface ResponsesStreamRendererOptions {
  /** The model id the caller asked for, shown in every `response` object. */
  model: string;
  /** The caller's request, echoed in the `response` objects the way OpenAI echoes settings. */
  request?: ChatRequest;
  /** The caller's `instructions`, echoed as given. */
  instructions?: string | null;
}

type Part = { type: 'output_text'; text: string; annotations: []; logprobs: [] } | { type: 'refusal'; refusal: string };

type OpenItem =
  | { kind: 'message'; id: string; parts: Part[]; part?: { type: 'output_text' | 'refusal'; text: string } }
  /** Once the signature arrived, further reasoning starts a new item (as a new thinking block would). */
  | {
      kind: 'reasoning';
      id: string;
      text: string;
      summaryOpen: boolean;
      signature?: string;
      origin?: UpstreamDialect;
      redacted?: string;
    }
  | {
      kind: 'function_call';
      id: string;
      call: number;
      callId: string;
      name: string;
      arguments: string;
      /** How the caller declared the tool, when not as a top-level function. */
      declared?: DeclaredTool;
    };

/**
 * Neutral events into Responses stream events (dialects.md §3.4, §6.8). One output item is open at a time
 * and its `output_index` is the number of items closed before it; every `.added` gets its `.done`, and the
 * items closed are exactly the `output` of the one terminal event. `sequence_number` counts every event
 * from 0. Responses has no `[DONE]`.
 *
 * Reasoning signatures and redacted thinking travel in `encrypted_content` in the same marked form as the
 * non-streaming renderer's (`reasoning-carrier.ts`), so a Responses client replaying its items round-trips
 * Anthropic thinking; a redacted block is a reasoning item of its own with an empty summary.
 *
 * Decisions: an upstream failure becomes `response.failed` (a terminal event carrying the response, which
 * agent clients such as Codex read for the error), not the bare `error` event; nothing is closed first.
 * Arguments for a call whose item is already closed are dropped (an item cannot reopen), and content
 * after the stop is dropped.
 */
export function createResponsesStreamRenderer(options: ResponsesStreamRendererOptions): StreamRenderer {
  let sequence = 0;
  let id = '';
  let createdAt = 0;
  let started = false;
  let finished = false;
  const items: unknown[] = [];
  let open: OpenItem | undefined;
  let held: StopReason | undefined;
  let usage: Usage = ZERO_USAGE;
  let toolCalls = 0;
  let stopReason: StopReason | undefined;
  let declared: Map<string, DeclaredTool> | null | undefined;

  // `fields` go after the payload (an item's locator): one literal that begins with keys of its own and takes both,
  // where `{ ...locator, text }` would get a hidden class of its own on every stream on Node 20.
  const emit = (out: SseFrame[], type: string, payload: Record<string, unknown>, fields?: Record<string, unknown>) => {
    out.push({ event: type, data: JSON.stringify({ type, sequence_number: sequence++, ...payload, ...fields }) });
  };

  const response = (fields: Pick<ResponsesObjectInput, 'status' | 'usage' | 'incompleteDetails' | 'error'>) =>
    responsesObject({
      id,
      model: options.model,
      createdAt,
      output: items.slice(),
      request: options.request,
      instructions: options.instructions ?? null,
      ...fields,
    });

  function begin(upstreamId: string, created: number, out: SseFrame[]): void {
    started = true;
    id = options.request?.responses?.id ?? callerId('resp_', upstreamId);
    createdAt = created;
    const initial = response({ status: 'in_progress', usage: null });
    emit(out, 'response.created', { response: initial });
    emit(out, 'response.in_progress', { response: initial });
  }

  function closePart(item: Extract<OpenItem, { kind: 'message' }>, out: SseFrame[]): void {
    const part = item.part;
    if (!part) return;
    const locator = { item_id: item.id, output_index: items.length, content_index: item.parts.length };
    let done: Part;
    if (part.type === 'output_text') {
      done = { type: 'output_text', text: part.text, annotations: [], logprobs: [] };
      emit(out, 'response.output_text.done', locator, { text: part.text, logprobs: [] });
    } else {
      done = { type: 'refusal', refusal: part.text };
      emit(out, 'response.refusal.done', locator, { refusal: part.text });
    }
    emit(out, 'response.content_part.done', locator, { part: done });
    item.parts.push(done);
    item.part = undefined;
  }

  /** `status`: `incomplete` for the item a length or content-filter stop cut off, as OpenAI marks it. */
  function close(out: SseFrame[], status: 'completed' | 'incomplete' = 'completed'): void {
    const item = open;
    if (!item) return;
    open = undefined;
    const outputIndex = items.length;
    let done: Record<string, unknown>;
    if (item.kind === 'message') {
      closePart(item, out);
      done = { id: item.id, type: 'message', status, content: item.parts, role: 'assistant' };
    } else if (item.kind === 'reasoning') {
      const locator = { item_id: item.id, output_index: outputIndex, summary_index: 0 };
      const summary = item.summaryOpen ? [{ type: 'summary_text', text: item.text }] : [];
      if (item.summaryOpen) {
        emit(out, 'response.reasoning_summary_text.done', locator, { text: item.text });
        emit(out, 'response.reasoning_summary_part.done', locator, { part: summary[0] });
      }
      done = { id: item.id, type: 'reasoning', summary };
      // The proof of origin travels where Responses keeps it, so a caller replaying the item sends it back.
      const encrypted = encryptedContentOf({
        type: 'reasoning',
        text: item.text,
        signature: item.signature,
        redacted: item.redacted,
        origin: item.origin,
      });
      if (encrypted !== undefined) done.encrypted_content = encrypted;
    } else {
      done = callItem(item, item.declared, status);
      const locator = { item_id: item.id, output_index: outputIndex };
      if (done.type === 'custom_tool_call') {
        // The free-form text is known only once the arguments that carry it are whole: one delta, then done.
        const input = done.input as string;
        if (input !== '') emit(out, 'response.custom_tool_call_input.delta', locator, { delta: input });
        emit(out, 'response.custom_tool_call_input.done', locator, { input });
      } else {
        emit(out, 'response.function_call_arguments.done', locator, { name: done.name, arguments: done.arguments });
      }
    }
    emit(out, 'response.output_item.done', { output_index: outputIndex, item: done });
    items.push(done);
  }

  function messageDelta(type: 'output_text' | 'refusal', delta: string, out: SseFrame[]): void {
    let item = open;
    if (item?.kind !== 'message') {
      close(out);
      item = { kind: 'message', id: dialectId('msg_'), parts: [] };
      open = item;
      emit(out, 'response.output_item.added', {
        output_index: items.length,
        item: { id: item.id, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
      });
    }
    if (item.part?.type !== type) {
      closePart(item, out);
      item.part = { type, text: '' };
      const part = type === 'output_text' ? { type, text: '', annotations: [], logprobs: [] } : { type, refusal: '' };
      emit(out, 'response.content_part.added', {
        item_id: item.id,
        output_index: items.length,
        content_index: item.parts.length,
        part,
      });
    }
    item.part.text += delta;
    // One literal per delta, not a spread of a locator with more keys: on Node 20 that gets a hidden class of its
    // own on every token.
    const itemId = item.id;
    const outputIndex = items.length;
    const contentIndex = item.parts.length;
    if (type === 'output_text')
      emit(out, 'response.output_text.delta', {
        item_id: itemId,
        output_index: outputIndex,
        content_index: contentIndex,
        delta,
        logprobs: [],
      });
    else
      emit(out, 'response.refusal.delta', {
        item_id: itemId,
        output_index: outputIndex,
        content_index: contentIndex,
        delta,
      });
  }

  function reasoningItem(out: SseFrame[]): Extract<OpenItem, { kind: 'reasoning' }> {
    if (open?.kind === 'reasoning' && open.signature === undefined) return open;
    close(out);
    const item: OpenItem = { kind: 'reasoning', id: dialectId('rs_'), text: '', summaryOpen: false };
    open = item;
    emit(out, 'response.output_item.added', {
      output_index: items.length,
      item: { id: item.id, type: 'reasoning', summary: [] },
    });
    return item;
  }

  /** A whole MCP step as its own item, with the events OpenAI sends for it between `added` and `done`. */
  function mcpItem(item: McpItem, out: SseFrame[]): void {
    close(out);
    const done = mcpOutputItem(item);
    const outputIndex = items.length;
    const locator = { item_id: done.id, output_index: outputIndex };
    emit(out, 'response.output_item.added', {
      output_index: outputIndex,
      item: done.type === 'mcp_call' ? { ...done, status: 'in_progress', output: null, error: null } : done,
    });
    if (done.type === 'mcp_list_tools') {
      emit(out, 'response.mcp_list_tools.in_progress', locator);
      emit(out, 'response.mcp_list_tools.completed', locator);
    } else {
      emit(out, 'response.mcp_call.in_progress', locator);
      emit(out, 'response.mcp_call_arguments.done', locator, { arguments: done.arguments });
      emit(
        out,
        item.type === 'mcp_call' && item.isError ? 'response.mcp_call.failed' : 'response.mcp_call.completed',
        locator,
      );
    }
    emit(out, 'response.output_item.done', { output_index: outputIndex, item: done });
    items.push(done);
  }

  function content(event: StreamEvent, out: SseFrame[]): void {
    switch (event.type) {
      case 'text':
        messageDelta('output_text', event.text, out);
        return;
      case 'refusal':
        messageDelta('refusal', event.text, out);
        return;
      case 'reasoning': {
        const item = reasoningItem(out);
        const locator = { item_id: item.id, output_index: items.length, summary_index: 0 };
        if (!item.summaryOpen) {
          item.summaryOpen = true;
          emit(out, 'response.reasoning_summary_part.added', locator, { part: { type: 'summary_text', text: '' } });
        }
        item.text += event.text;
        emit(out, 'response.reasoning_summary_text.delta', {
          item_id: locator.item_id,
          output_index: locator.output_index,
          summary_index: locator.summary_index,
          delta: event.text,
        });
        return;
      }
      case 'reasoning_signature': {
        const item = reasoningItem(out);
        item.signature = event.signature;
        item.origin = event.origin;
        return;
      }
      case 'reasoning_redacted': {
        close(out);
        const item = reasoningItem(out);
        item.redacted = event.data;
        item.origin = 'anthropic';
        close(out);
        return;
      }
      case 'tool_call': {
        close(out);
        toolCalls++;
        // Only a request that declared namespaced or free-form tools has names to map back.
        if (declared === undefined) declared = declaredTools(options.request?.tools) ?? null;
        const as = declared?.get(event.name);
        const item: OpenItem = {
          kind: 'function_call',
          id: callItemId(as),
          call: event.index,
          callId: event.id || dialectId('call_'),
          name: event.name,
          arguments: '',
        };
        if (as) item.declared = as;
        open = item;
        emit(out, 'response.output_item.added', {
          output_index: items.length,
          item: callItem(item, as, 'in_progress'),
        });
        return;
      }
      case 'mcp':
        mcpItem(event.item, out);
        return;
      case 'tool_arguments':
        if (open?.kind === 'function_call' && open.call === event.index) {
          open.arguments += event.delta;
          // A free-form call's deltas are JSON of its one argument, not its text: it is sent whole at the end.
          if (open.declared?.kind === 'custom') return;
          emit(out, 'response.function_call_arguments.delta', {
            item_id: open.id,
            output_index: items.length,
            delta: event.delta,
          });
        }
        return;
    }
  }

  function finish(out: SseFrame[]): void {
    close(out);
    stopReason = settleStopReason(held ?? 'end_turn', toolCalls > 0);
    const { status, incomplete_details } = responsesStatus(stopReason);
    const type = status === 'completed' ? 'response.completed' : 'response.incomplete';
    emit(out, type, { response: response({ status, usage, incompleteDetails: incomplete_details }) });
  }

  function render(event: StreamEvent): SseFrame[] {
    if (finished) return [];
    const out: SseFrame[] = [];
    if (event.type === 'start') {
      if (event.usage) usage = mergeUsage(usage, event.usage);
      if (!started) begin(event.id, event.created, out);
      return out;
    }
    if (event.type === 'usage') {
      usage = mergeUsage(usage, event.usage);
      return out;
    }
    if (!started) begin('', nowSeconds(), out);
    switch (event.type) {
      case 'error':
        finished = true;
        emit(out, 'response.failed', {
          response: response({
            status: 'failed',
            usage,
            error: { code: responsesErrorCode(event.error), message: event.error.message },
          }),
        });
        return out;
      case 'stop':
        if (held === undefined) {
          held = event.reason;
          close(out, responsesStatus(settleStopReason(held, toolCalls > 0)).status);
        }
        return out;
      case 'end':
        finished = true;
        finish(out);
        return out;
    }
    if (held === undefined) content(event, out);
    return out;
  }

  return {
    render,
    summary: () => (stopReason === undefined ? { toolCalls, usage } : { toolCalls, stopReason, usage }),
  };
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createChatStreamParser } from '../../chat/stream-parser';
import type { SseFrame, StreamEvent } from '../../ir';
import { isObject, objectOf, stringOf, type JsonObject } from '../../json';
import { createMessagesStreamParser } from '../../messages/stream-parser';
import { createSseDecoder, encodeSse, type SseEvent } from '../../sse';
import type { StreamRenderer } from '../../stream';

/**
 * Test kit for the stream fixtures: replays an upstream transcript through the real decoder, parser and
 * renderer, then reads the caller's frames back the way a client would, and lists broken invariants.
 */

export function fixture(name: string): string {
  return readFileSync(path.join(__dirname, name), 'utf8');
}

export function decode(chunks: Array<string | Uint8Array>): SseEvent[] {
  const events: SseEvent[] = [];
  const decoder = createSseDecoder((event) => events.push(event));
  for (const chunk of chunks) decoder.feed(chunk);
  decoder.end();
  return events;
}

/** The neutral events of a fixture; the upstream dialect is the file name's prefix. */
export function upstreamEvents(name: string): StreamEvent[] {
  const parser = name.startsWith('messages-') ? createMessagesStreamParser() : createChatStreamParser();
  return decode([fixture(name)]).flatMap((event) => parser.push(event));
}

export function translate(name: string, renderer: StreamRenderer): SseFrame[] {
  return upstreamEvents(name).flatMap((event) => renderer.render(event));
}

const wire = (frames: SseFrame[]): string => frames.map(encodeSse).join('');

/** The frames as a client's SSE decoder sees them after the bytes went over the wire. */
export const received = (frames: SseFrame[]): SseEvent[] => decode([wire(frames)]);

export const payload = (frame: SseEvent): JsonObject => objectOf(JSON.parse(frame.data));

// ---------------------------------------------------------------------------------------------------------
// Reading a caller's stream back

interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

export function assembleChat(frames: SseFrame[]) {
  let text = '';
  let reasoning = '';
  const calls: AssembledCall[] = [];
  const finishReasons: string[] = [];
  const usages: unknown[] = [];
  for (const frame of received(frames)) {
    if (frame.data === '[DONE]') continue;
    const chunk = payload(frame);
    if ('usage' in chunk && chunk.usage !== null) usages.push(chunk.usage);
    const choice = Array.isArray(chunk.choices) ? objectOf(chunk.choices[0]) : {};
    const delta = objectOf(choice.delta);
    text += stringOf(delta.content) ?? '';
    reasoning += stringOf(delta.reasoning_content) ?? '';
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const c = objectOf(call);
      const fn = objectOf(c.function);
      const index = Number(c.index);
      calls[index] ??= { id: '', name: '', arguments: '' };
      const target = calls[index]!;
      if (typeof c.id === 'string') target.id = c.id;
      if (typeof fn.name === 'string') target.name = fn.name;
      target.arguments += stringOf(fn.arguments) ?? '';
    }
    if (typeof choice.finish_reason === 'string') finishReasons.push(choice.finish_reason);
  }
  return { text, reasoning, calls, finishReasons, usages };
}

interface AssembledBlock {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  data?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

export function assembleMessages(frames: SseFrame[]) {
  const blocks: AssembledBlock[] = [];
  const json: string[] = [];
  let messageDelta: JsonObject = {};
  let message: JsonObject = {};
  for (const frame of received(frames)) {
    const event = payload(frame);
    const index = Number(event.index);
    if (event.type === 'message_start') message = objectOf(event.message);
    if (event.type === 'message_delta') messageDelta = event;
    if (event.type === 'content_block_start') {
      const block = objectOf(event.content_block);
      blocks[index] = { ...(block as unknown as AssembledBlock) };
      if (block.type === 'tool_use') json[index] = '';
    }
    if (event.type === 'content_block_delta') {
      const block = blocks[index]!;
      const delta = objectOf(event.delta);
      if (delta.type === 'text_delta') block.text += String(delta.text);
      if (delta.type === 'thinking_delta') block.thinking += String(delta.thinking);
      if (delta.type === 'signature_delta') block.signature += String(delta.signature);
      if (delta.type === 'input_json_delta') json[index] += String(delta.partial_json);
    }
    if (event.type === 'content_block_stop' && blocks[index]?.type === 'tool_use') {
      blocks[index]!.input = json[index] ? JSON.parse(json[index]!) : {};
    }
  }
  const delta = objectOf(messageDelta.delta);
  return {
    message,
    blocks,
    stopReason: delta.stop_reason,
    stopSequence: delta.stop_sequence,
    usage: messageDelta.usage,
  };
}

export function assembleResponses(frames: SseFrame[]) {
  const items: unknown[] = [];
  let terminal: JsonObject = {};
  for (const frame of received(frames)) {
    const event = payload(frame);
    if (event.type === 'response.output_item.done') items.push(event.item);
    if (['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(String(event.type)))
      terminal = event;
  }
  return { items, terminal: String(terminal.type), response: objectOf(terminal.response) };
}

// ---------------------------------------------------------------------------------------------------------
// Invariants (dialects.md §7): each returns the broken ones, so a failure names what went wrong.

export function chatViolations(frames: SseFrame[], options: { model: string; includeUsage: boolean }): string[] {
  const problems: string[] = [];
  const events = received(frames);
  const done = events.filter((e) => e.data === '[DONE]').length;
  if (done !== 1 || events[events.length - 1]?.data !== '[DONE]') problems.push(`[DONE] ${done} times or not last`);
  if (events.some((e) => e.event !== undefined)) problems.push('chat frame with an event: line');
  const chunks = events.filter((e) => e.data !== '[DONE]').map(payload);
  const ids = new Set(chunks.map((c) => `${String(c.id)}@${String(c.created)}`));
  if (ids.size !== 1) problems.push(`id/created vary: ${[...ids].join(', ')}`);
  if (chunks.some((c) => c.model !== options.model)) problems.push('a chunk shows another model');
  if (chunks.some((c) => c.object !== 'chat.completion.chunk')) problems.push('wrong object');
  if (objectOf(objectOf(Array.isArray(chunks[0]?.choices) ? chunks[0]!.choices[0] : {}).delta).role !== 'assistant')
    problems.push('first delta lacks role');
  const usageChunks = chunks.filter((c) => Array.isArray(c.choices) && c.choices.length === 0);
  if (options.includeUsage) {
    if (usageChunks.length !== 1 || chunks[chunks.length - 1] !== usageChunks[0])
      problems.push('not exactly one usage chunk just before [DONE]');
    if (chunks.some((c) => !('usage' in c))) problems.push('a chunk lacks usage while include_usage');
  } else if (usageChunks.length > 0 || chunks.some((c) => 'usage' in c))
    problems.push('usage sent without include_usage');
  const finishes = chunks.filter(
    (c) => Array.isArray(c.choices) && isObject(c.choices[0]) && c.choices[0].finish_reason !== null,
  );
  if (finishes.length !== 1) problems.push(`${finishes.length} finish_reason chunks`);
  return problems;
}

export function messagesViolations(frames: SseFrame[]): string[] {
  const problems: string[] = [];
  const events = received(frames);
  if (events.some((e) => e.event === undefined)) problems.push('frame without an event: line');
  const payloads = events.map(payload);
  events.forEach(
    (e, i) =>
      e.event !== payloads[i]!.type &&
      problems.push(`event ${String(e.event)} carries type ${String(payloads[i]!.type)}`),
  );
  if (payloads[0]?.type !== 'message_start') problems.push('message_start is not first');
  const last = payloads[payloads.length - 1]?.type;
  if (last !== 'message_stop' && last !== 'error') problems.push('ends neither with message_stop nor error');
  let open: number | undefined;
  let next = 0;
  let toolUse = false;
  for (const p of payloads) {
    if (p.type === 'content_block_start') {
      if (open !== undefined) problems.push(`block ${String(p.index)} opened while ${open} is open`);
      if (p.index !== next) problems.push(`block index ${String(p.index)}, expected ${next}`);
      open = next++;
      const block = objectOf(p.content_block);
      if (block.type === 'tool_use') {
        toolUse = true;
        if (!/^[a-zA-Z0-9_-]+$/.test(String(block.id))) problems.push(`tool id ${String(block.id)} not sanitised`);
      }
    }
    if (p.type === 'content_block_delta' && p.index !== open)
      problems.push(`delta for block ${String(p.index)} while ${String(open)} is open`);
    if (p.type === 'content_block_stop') {
      if (p.index !== open) problems.push(`stop for block ${String(p.index)} while ${String(open)} is open`);
      open = undefined;
    }
    if (p.type === 'message_delta' && open !== undefined) problems.push('message_delta with a block open');
  }
  const deltas = payloads.filter((p) => p.type === 'message_delta');
  if (last === 'message_stop' && deltas.length !== 1) problems.push(`${deltas.length} message_delta events`);
  if (toolUse && deltas.length === 1 && objectOf(deltas[0]!.delta).stop_reason !== 'tool_use')
    problems.push('tool_use sent but stop_reason is not tool_use');
  return problems;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export function responsesViolations(frames: SseFrame[]): string[] {
  const problems: string[] = [];
  const events = received(frames);
  if (events.some((e) => e.data === '[DONE]')) problems.push('[DONE] in a Responses stream');
  if (events.some((e) => e.event === undefined)) problems.push('frame without an event: line');
  const payloads = events.map(payload);
  payloads.forEach(
    (p, i) => p.sequence_number !== i && problems.push(`sequence_number ${String(p.sequence_number)} at position ${i}`),
  );
  events.forEach(
    (e, i) =>
      e.event !== payloads[i]!.type &&
      problems.push(`event ${String(e.event)} carries type ${String(payloads[i]!.type)}`),
  );
  const terminals = payloads.filter((p) => TERMINAL.has(String(p.type)));
  if (terminals.length !== 1 || payloads[payloads.length - 1] !== terminals[0])
    problems.push(`${terminals.length} terminal events or not last`);
  if (terminals[0]?.type === 'response.failed' || terminals[0]?.type === 'error') return problems;
  const key = (p: JsonObject) => `${String(p.output_index)}/${String(p.content_index ?? p.summary_index ?? '')}`;
  for (const [added, done] of [
    ['response.output_item.added', 'response.output_item.done'],
    ['response.content_part.added', 'response.content_part.done'],
    ['response.reasoning_summary_part.added', 'response.reasoning_summary_part.done'],
  ] as const) {
    const opened = payloads.filter((p) => p.type === added).map(key);
    const closed = payloads.filter((p) => p.type === done).map(key);
    if (opened.join() !== closed.join()) problems.push(`${added} [${opened.join()}] vs ${done} [${closed.join()}]`);
  }
  const items = payloads.filter((p) => p.type === 'response.output_item.done').map((p) => p.item);
  const output = objectOf(terminals[0]?.response).output;
  if (JSON.stringify(output) !== JSON.stringify(items)) problems.push('terminal output differs from the items emitted');
  return problems;
}

import type { StreamEvent } from '../ir';
import { isObject, type JsonObject } from '../json';
import { parseData, type StreamPassthrough } from '../stream';
import { chatStreamError } from '../stream-errors';
import { EventTemplate } from '../event-template';
import { cutTemplate, fillTemplate, readTemplate, slotText, type Template } from '../frame-template';
import { createChatStreamParser, DONE } from './stream-parser';

export interface ChatPassthroughOptions {
  /** The model id the caller asked for, written over the upstream's. */
  model: string;
  /** The caller set `stream_options.include_usage` (the gateway always asks the upstream for usage). */
  includeUsage: boolean;
}

const NOTHING = { frames: [], events: [] };

/**
 * A text chunk cut around its delta's `content` (and `obfuscation`): as the upstream wrote it, and as the caller got it
 * when changed.
 */
interface TextChunk {
  upstream: Template;
  caller?: Template;
  /** Both as bytes on the wire, made when first asked for (null: they do not have the same slots). */
  bytes?: EventTemplate | null;
}

/**
 * A chat caller on a chat upstream: chunks go out as the upstream wrote them, except that `model` names the
 * caller's model and, when the caller did not ask for usage, `usage` fields and the usage-only chunk are
 * removed (strict clients reject a `choices: []` chunk they did not ask for). A chunk is serialised again
 * only when one of those changes applies. Nothing is forwarded after `[DONE]` or an error.
 *
 * Text chunks after the first are read and rewritten through a template (frame-template.ts) when they differ
 * from the last parsed one only in their text and padding, which is what upstreams send for almost every
 * token; the bytes are the same as the full parse and serialisation would give.
 */
export function createChatPassthrough(options: ChatPassthroughOptions): StreamPassthrough {
  const parser = createChatStreamParser();
  let finished = false;
  let textChunk: TextChunk | undefined;
  // An upstream that does not write its chunks as JSON.stringify would is not cut into templates again.
  let templatesOff = false;
  return {
    textTemplate() {
      if (!textChunk) return undefined;
      textChunk.bytes ??= EventTemplate.of('data: ', textChunk.upstream, textChunk.caller) ?? null;
      return textChunk.bytes ?? undefined;
    },
    push(event) {
      if (finished) return NOTHING;
      if (textChunk && event.event === undefined) {
        const bodies = readTemplate(event.data, textChunk.upstream);
        if (bodies) {
          const text = slotText(bodies[0]!);
          const data = textChunk.caller ? fillTemplate(textChunk.caller, bodies) : event.data;
          return { frames: [{ data }], events: text === '' ? [] : [{ type: 'text', text }] };
        }
      }
      textChunk = undefined;
      const data = event.data.trim();
      if (data === DONE) {
        finished = true;
        return { frames: [{ data: DONE }], events: parser.push(event) };
      }
      if (data === '') return NOTHING;
      const payload = parseData(data);
      const events = parser.pushPayload(payload, event.event);
      const failure = events.find((e) => e.type === 'error');
      if (failure) {
        finished = true;
        // An OpenAI-shaped error goes out as it came; anything else (a bare object under `event: error`,
        // text that is not JSON) is rewritten into the shape the OpenAI SDK throws on.
        const forward = isObject(payload) && isObject(payload.error) ? event.data : chatStreamError(failure.error);
        return { frames: [{ data: forward }], events };
      }
      if (!isObject(payload)) return { frames: [], events };
      const delta = !templatesOff && event.event === undefined ? textDelta(payload, events) : undefined;
      let upstream: Template | undefined;
      let bodies: string[] | undefined;
      if (delta) {
        // A template reads later chunks exactly only when this one is written as JSON.stringify writes it:
        // the chunk is then its own template with its own strings in the slots.
        upstream = cutTextChunk(payload, delta);
        bodies = upstream && slotBodies(payload, delta);
        if (upstream ? fillTemplate(upstream, bodies!) !== event.data : JSON.stringify(payload) !== event.data) {
          upstream = undefined;
          templatesOff = true;
        }
      }
      let changed = false;
      if (payload.model !== options.model) {
        payload.model = options.model;
        changed = true;
      }
      if (!options.includeUsage && 'usage' in payload) {
        if (Array.isArray(payload.choices) && payload.choices.length === 0) return { frames: [], events };
        // Left out of the JSON as undefined, not deleted: `delete` turns the chunk into a dictionary, a hidden class
        // change (and a slower JSON.stringify) on every chunk that carries usage.
        payload.usage = undefined;
        changed = true;
      }
      if (upstream && delta) {
        const caller = changed ? cutTextChunk(payload, delta) : undefined;
        if (!changed || caller) textChunk = { upstream, caller };
        // The changed chunk is its caller template with the same strings, as JSON.stringify would write it.
        if (caller) return { frames: [{ data: fillTemplate(caller, bodies!) }], events };
      }
      return { frames: [{ data: changed ? JSON.stringify(payload) : event.data }], events };
    },
  };
}

/**
 * The delta of a chunk whose only neutral event (past the stream's start) is its `content` as text: a later
 * chunk that differs only in that text yields just its text too, and leaves the parser where it was.
 */
function textDelta(payload: JsonObject, events: StreamEvent[]): JsonObject | undefined {
  const content = events.filter((e) => e.type !== 'start');
  if (content.length !== 1 || content[0]!.type !== 'text') return undefined;
  // The parser read that text from choice 0's delta.content.
  return ((payload.choices as unknown[])[0] as JsonObject).delta as JsonObject;
}

/** The strings cutTextChunk cuts around, in its order, as JSON.stringify writes them between their quotes. */
function slotBodies(payload: JsonObject, delta: JsonObject): string[] {
  const body = (value: unknown) => JSON.stringify(value).slice(1, -1);
  return typeof payload.obfuscation === 'string'
    ? [body(delta.content), body(payload.obfuscation)]
    : [body(delta.content)];
}

/** The chunk cut around its delta's content and its `obfuscation` padding, both left as they were. */
function cutTextChunk(payload: JsonObject, delta: JsonObject): Template | undefined {
  const text = delta.content;
  const padding = payload.obfuscation;
  const puts = [(value: string) => (delta.content = value)];
  if (typeof padding === 'string') puts.push((value) => (payload.obfuscation = value));
  const template = cutTemplate(payload, puts);
  delta.content = text;
  if (typeof padding === 'string') payload.obfuscation = padding;
  return template;
}

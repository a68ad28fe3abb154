import { isObject, objectOf, stringOf, type JsonObject } from '../json';
import { parseData, type StreamPassthrough } from '../stream';
import { messagesStreamError } from '../stream-errors';
import { EventTemplate } from '../event-template';
import { cutTemplate, readTemplate, slotText, type Template } from '../frame-template';
import { createMessagesStreamParser } from './stream-parser';

export interface MessagesPassthroughOptions {
  /** The model id the caller asked for, written over the upstream's in `message_start`. */
  model: string;
}

const NOTHING = { frames: [], events: [] };
const TEXT_DELTA = 'content_block_delta';

/**
 * A Messages caller on an Anthropic upstream: every event goes out byte-identical (pings and event types
 * this code does not know included), except `message_start`, whose `message.model` becomes the caller's
 * model. A frame that lacked its `event:` line gets one from the payload's `type`, since the Anthropic SDK
 * would drop it otherwise. Nothing is forwarded after `message_stop` or an error.
 *
 * Text deltas after the first are read through a template (frame-template.ts) when they differ from the last
 * parsed one only in their text, which is what the API sends for almost every token.
 */
export function createMessagesPassthrough(options: MessagesPassthroughOptions): StreamPassthrough {
  const parser = createMessagesStreamParser();
  let finished = false;
  let textDelta: Template | undefined;
  // textDelta as bytes on the wire, made when first asked for.
  let textBytes: EventTemplate | undefined;
  // An upstream that does not write its events as JSON.stringify would is not cut into templates again.
  let templatesOff = false;
  return {
    textTemplate() {
      if (!textDelta) return undefined;
      return (textBytes ??= EventTemplate.of(`event: ${TEXT_DELTA}\ndata: `, textDelta));
    },
    push(event) {
      if (finished) return NOTHING;
      if (textDelta && event.event === TEXT_DELTA) {
        const bodies = readTemplate(event.data, textDelta);
        if (bodies) {
          const text = slotText(bodies[0]!);
          return {
            frames: [{ event: TEXT_DELTA, data: event.data }],
            events: text === '' ? [] : [{ type: 'text', text }],
          };
        }
      }
      textDelta = undefined;
      textBytes = undefined;
      if (event.data.trim() === '')
        return {
          frames: [event.event === undefined ? { data: event.data } : { event: event.event, data: event.data }],
          events: [],
        };
      const payload = parseData(event.data);
      const name = event.event ?? stringOf(objectOf(payload).type);
      const events = parser.pushPayload(name ?? '', payload);
      const last = events[events.length - 1];
      if (last?.type === 'error' || last?.type === 'end') finished = true;
      if (!isObject(payload)) {
        // Not JSON: the parser reported a malformed stream; the caller gets it as an Anthropic error.
        const error = last?.type === 'error' ? last.error : { status: 502, message: 'The upstream stream failed.' };
        return { frames: [{ event: 'error', data: messagesStreamError(error) }], events };
      }
      if (name === 'message_start' && isObject(payload.message) && payload.message.model !== options.model) {
        payload.message.model = options.model;
        return { frames: [{ event: name, data: JSON.stringify(payload) }], events };
      }
      // A text delta (under its own event name): its one neutral event is its `delta.text`.
      if (!templatesOff && event.event === TEXT_DELTA && events.length === 1 && events[0]!.type === 'text') {
        if (JSON.stringify(payload) === event.data) {
          const delta = payload.delta as JsonObject;
          textDelta = cutTemplate(payload, [(value) => (delta.text = value)]);
          delta.text = events[0]!.text;
        } else templatesOff = true;
      }
      return { frames: [name === undefined ? { data: event.data } : { event: name, data: event.data }], events };
    },
  };
}

import { isObject } from '../json';
import { parseData, type StreamPassthrough } from '../stream';
import { chatStreamError } from '../stream-errors';
import { createChatStreamParser, DONE } from './stream-parser';

export interface ChatPassthroughOptions {
  /** The model id the caller asked for, written over the upstream's. */
  model: string;
  /** The caller set `stream_options.include_usage` (the gateway always asks the upstream for usage). */
  includeUsage: boolean;
}

const NOTHING = { frames: [], events: [] };

/**
 * A chat caller on a chat upstream: chunks go out as the upstream wrote them, except that `model` names the
 * caller's model and, when the caller did not ask for usage, `usage` fields and the usage-only chunk are
 * removed (strict clients reject a `choices: []` chunk they did not ask for). A chunk is serialised again
 * only when one of those changes applies. Nothing is forwarded after `[DONE]` or an error.
 */
export function createChatPassthrough(options: ChatPassthroughOptions): StreamPassthrough {
  const parser = createChatStreamParser();
  let finished = false;
  return {
    push(event) {
      if (finished) return NOTHING;
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
      let changed = false;
      if (payload.model !== options.model) {
        payload.model = options.model;
        changed = true;
      }
      if (!options.includeUsage && 'usage' in payload) {
        if (Array.isArray(payload.choices) && payload.choices.length === 0) return { frames: [], events };
        delete payload.usage;
        changed = true;
      }
      return { frames: [{ data: changed ? JSON.stringify(payload) : event.data }], events };
    },
  };
}

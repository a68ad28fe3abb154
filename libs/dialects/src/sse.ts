import { createParser } from 'eventsource-parser';
import type { SseFrame } from './ir';
import { createUtf8Decoder, type Utf8Decoder } from './utf8';

/** One decoded SSE event: the `event:` name when the frame had one, and the joined `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

export interface SseDecoder {
  /**
   * Feeds the next piece of the body. Bytes may split anywhere, even inside a multi-byte character: they
   * go through one streaming decoder so a character cut between two network chunks is not mangled.
   */
  feed(chunk: string | Uint8Array): void;
  /** The body ended: flushes the last event even when the upstream left out the closing blank line. */
  end(): void;
  /**
   * Everything fed so far ended with a blank line (LF LF), so no event, line or character is pending: the
   * bytes that come next may be read apart (as the byte relay does) and this decoder fed after them.
   */
  atEventBoundary(): boolean;
}

const LF = 0x0a;

/**
 * Upstream SSE bodies into events. eventsource-parser owns the framing rules (chunks split mid-line, CRLF
 * or bare CR, comments, `id:`/`retry:` fields, a leading BOM); this wrapper adds byte decoding and a final
 * flush, and drops the `id` field, which no dialect uses.
 */
export function createSseDecoder(onEvent: (event: SseEvent) => void): SseDecoder {
  const parser = createParser({
    onEvent: (message) =>
      onEvent(message.event === undefined ? { data: message.data } : { event: message.event, data: message.data }),
  });
  let bytes: Utf8Decoder | undefined;
  let boundary = false;
  return {
    feed(chunk) {
      if (typeof chunk === 'string') {
        parser.feed(chunk);
        boundary = chunk.endsWith('\n\n');
      } else {
        parser.feed((bytes ??= createUtf8Decoder()).write(chunk));
        // Two line feeds last: no character is held back, and the text ends with them too.
        boundary = chunk.length >= 2 && chunk[chunk.length - 1] === LF && chunk[chunk.length - 2] === LF;
      }
    },
    atEventBoundary: () => boundary,
    end() {
      if (bytes) parser.feed(bytes.end());
      // Some OpenAI-compatible servers close after `data: [DONE]\n` without the blank line that dispatches
      // an event. Two line feeds finish any partial line and dispatch; a cut-off JSON line then surfaces as
      // malformed data, which the stream parsers report as an upstream error instead of losing it quietly.
      parser.feed('\n\n');
      parser.reset();
      boundary = false;
    },
  };
}

/**
 * One frame on the wire. Payloads are single-line JSON, so this is two concatenations; a payload that does
 * contain line breaks (an upstream's multi-line `data:` passed through) is split into several `data:` lines,
 * which decoders join back with `\n`.
 */
export function encodeSse(frame: SseFrame): string {
  const data = frame.data.indexOf('\n') === -1 ? frame.data : frame.data.replace(/\r?\n/g, '\ndata: ');
  return frame.event === undefined ? `data: ${data}\n\n` : `event: ${frame.event}\ndata: ${data}\n\n`;
}

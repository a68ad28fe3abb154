/**
 * Most frames of a streamed reply are one JSON text that differs from the previous frame only in a string
 * or two (the delta's text; OpenAI's random `obfuscation` padding). A template is such a frame cut around
 * those strings, its slots: a later frame that is the same text with other strings in the slots is read by
 * comparing the fixed pieces and checking the strings between them, with no JSON.parse, and written again
 * by splicing, with no JSON.stringify.
 *
 * That is exact only for frames written the way JSON.stringify writes them (no spaces, no duplicate keys,
 * numbers and escapes in their one canonical form): such a frame is JSON.stringify of its own parse, so a
 * frame that matches the template is JSON.stringify of the same value with other strings in the slots.
 * Callers cut a template only from a frame they checked is written that way; anything else (and any frame
 * that does not match) goes the long way.
 */
export interface Template {
  /** The fixed text: pieces[i] ends with slot i's opening quote, pieces[i + 1] starts with its closing one. */
  pieces: string[];
  /** order[i]: which of the strings given to cutTemplate sits in slot i (slots are in text order). */
  order: number[];
}

// Strings no upstream sends: a frame in which one of their encodings appears other than once is not cut.
// Made once each, with their JSON encodings, since every stream cuts a template or two.
const MARKS: Array<{ mark: string; encoded: string }> = [];
function markAt(i: number): { mark: string; encoded: string } {
  for (let next = MARKS.length; next <= i; next++) {
    const mark = `\u0000sbc-slot-${next}\u0000`;
    MARKS.push({ mark, encoded: JSON.stringify(mark) });
  }
  return MARKS[i]!;
}

/**
 * Cuts `value`'s JSON text around the strings the setters write: each `put(text)` sets one string of
 * `value` (callers restore them afterwards). Undefined when a mark is not found exactly once.
 */
export function cutTemplate(value: unknown, puts: Array<(text: string) => void>): Template | undefined {
  const encoded = puts.map((put, i) => {
    const { mark, encoded: written } = markAt(i);
    put(mark);
    return written;
  });
  const json = JSON.stringify(value);
  const found: Array<{ at: number; put: number }> = [];
  for (let put = 0; put < encoded.length; put++) {
    const at = json.indexOf(encoded[put]!);
    if (at < 0 || json.indexOf(encoded[put]!, at + 1) >= 0) return undefined;
    found.push({ at, put });
  }
  found.sort((a, b) => a.at - b.at);
  const pieces: string[] = [];
  let from = 0;
  for (const { at, put } of found) {
    pieces.push(json.slice(from, at + 1));
    from = at + encoded[put]!.length - 1;
  }
  pieces.push(json.slice(from));
  return { pieces, order: found.map((slot) => slot.put) };
}

/**
 * The strings in `data`'s slots, in the order given to cutTemplate and as written (still escaped), when
 * `data` is the template's text with strings written the way JSON.stringify writes them in its slots;
 * undefined otherwise (the caller then parses the frame).
 */
export function readTemplate(data: string, template: Template): string[] | undefined {
  const { pieces, order } = template;
  const bodies: string[] = new Array<string>(order.length);
  let at = 0;
  for (let slot = 0; slot < order.length; slot++) {
    if (!matches(data, at, pieces[slot]!)) return undefined;
    const start = at + pieces[slot]!.length;
    const end = stringEnd(data, start);
    if (end < 0) return undefined;
    bodies[order[slot]!] = data.slice(start, end);
    at = end;
  }
  const last = pieces[order.length]!;
  return at + last.length === data.length && matches(data, at, last) ? bodies : undefined;
}

/** `data` has `piece` at `at` (a slice compared whole: V8 runs that several times faster than startsWith). */
const matches = (data: string, at: number, piece: string) => data.slice(at, at + piece.length) === piece;

/** The template's text with `bodies` (in the order given to cutTemplate, as readTemplate returns them) in its slots. */
export function fillTemplate(template: Template, bodies: string[]): string {
  let text = template.pieces[0]!;
  for (let slot = 0; slot < template.order.length; slot++)
    text += bodies[template.order[slot]!]! + template.pieces[slot + 1]!;
  return text;
}

/**
 * The string a body read by readTemplate stands for, as a string of its own. V8 makes a slice of 13 or more
 * characters a view into the frame, which would keep every frame alive for as long as the stream's text is
 * held; JSON.parse copies.
 */
export function slotText(body: string): string {
  return body.length < 13 && body.indexOf('\\') === -1 ? body : (JSON.parse(`"${body}"`) as string);
}

/** `"`, `\`, b, f, n, r, t: the short escapes, which JSON.stringify writes for those characters. */
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/**
 * Where the string body starting at `start` ends (its closing quote), when it is written as JSON.stringify
 * writes strings; -1 when it is not, or has no end.
 */
function stringEnd(data: string, start: number): number {
  for (let i = start; i < data.length; i++) {
    const code = data.charCodeAt(i);
    if (code === 0x22) return i;
    // JSON.stringify escapes control characters and lone surrogates as \u sequences, which are left to
    // the full parse together with `\/` and any other escape.
    if (code < 0x20) return -1;
    if (code === 0x5c) {
      if (!SHORT_ESCAPES.has(data.charCodeAt(i + 1))) return -1;
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      const low = data.charCodeAt(i + 1);
      if (code > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return -1;
      i++;
    }
  }
  return -1;
}

import type { Template } from './frame-template';

/**
 * A frame template (frame-template.ts) as bytes on the wire, for relaying a stream's text deltas straight
 * from the upstream's body: a whole SSE event that is the template's event with other strings in its slots
 * is read by comparing bytes, and the caller's event is written by copying bytes. Nothing is decoded, parsed
 * or allocated per event, and a relay touches only this template and the chunk, which is what relaying a
 * token costs when thousands of streams are open and each one's state is cold in the CPU's caches.
 *
 * The bytes read are exactly those the string path (SSE decoder, readTemplate, fillTemplate, encodeSse)
 * reads the same way: one event written as `<prefix><JSON>\n\n`, whose slots hold strings written as
 * JSON.stringify writes them, in well-formed UTF-8 (the string path would replace an ill-formed sequence, so
 * such bytes are left to it). Anything else is not read, and goes the string path.
 */
export class EventTemplate {
  /** Slots per event. */
  readonly slots: number;
  /** The slot (in wire order) that holds the text, the first string given to cutTemplate. */
  readonly textSlot: number;
  /** The caller's event is the upstream's, byte for byte: a read event is relayed as it came. */
  readonly unchanged: boolean;

  /** The length of the caller's event's fixed bytes (all its pieces). */
  private readonly callerFixedLength: number;

  private constructor(
    /**
     * The upstream event's fixed bytes (its pieces one after the other, the prefix and the blank line
     * included), then the caller's: one buffer, so reading and writing a token touch one block of memory.
     */
    private readonly fixed: Buffer,
    /**
     * Where each piece of the upstream's event starts in `fixed` and (last) where its last one ends, then the
     * same for the caller's: `slots + 2` bounds each.
     */
    private readonly starts: Int32Array,
    order: readonly number[],
  ) {
    this.slots = order.length;
    this.textSlot = order.indexOf(0);
    const caller = this.slots + 2;
    this.callerFixedLength = starts[2 * caller - 1]! - starts[caller]!;
    this.unchanged = fixed.compare(fixed, starts[caller], starts[2 * caller - 1], 0, starts[caller - 1]) === 0;
  }

  /**
   * The template of events written as `prefix` (`data: `, or an `event:` line and `data: `), the template's
   * JSON and a blank line; the caller's events are `caller`'s (its slots the same strings in the same order),
   * or the upstream's own. Undefined when the two do not have the same slots.
   */
  static of(prefix: string, upstream: Template, caller: Template = upstream): EventTemplate | undefined {
    if (caller.order.length !== upstream.order.length || caller.order.some((put, slot) => put !== upstream.order[slot]))
      return undefined;
    const [fixed, starts] = wireBytes(prefix, [upstream.pieces, caller.pieces]);
    return new EventTemplate(fixed, starts, upstream.order);
  }

  /**
   * Reads the event that starts at `at` in `bytes`. When it is this template's, writes each slot's start and
   * end (the string's bytes, still escaped, between its quotes) to `found` from `into` on, and returns where
   * the event ends; otherwise -1.
   */
  read(bytes: Buffer, at: number, found: Int32Array, into: number): number {
    const { fixed, starts } = this;
    let pos = at;
    for (let slot = 0; slot <= this.slots; slot++) {
      const from = starts[slot]!;
      const to = starts[slot + 1]!;
      const end = pos + to - from;
      if (end > bytes.length || !sameBytes(bytes, pos, fixed, from, to)) return -1;
      if (slot === this.slots) return end;
      const close = stringEnd(bytes, end);
      if (close < 0) return -1;
      found[into + 2 * slot] = end;
      found[into + 2 * slot + 1] = close;
      pos = close;
    }
    return -1;
  }

  /** The length of the caller's event for the slots read into `found` at `from`. */
  callerLength(found: Int32Array, from: number): number {
    let length = this.callerFixedLength;
    for (let slot = 0; slot < this.slots; slot++) length += found[from + 2 * slot + 1]! - found[from + 2 * slot]!;
    return length;
  }

  /**
   * Writes the caller's event, with the slots read from `bytes` into `found` at `from`, to `target` at `pos`; returns
   * its end.
   */
  writeCaller(bytes: Buffer, found: Int32Array, from: number, target: Buffer, pos: number): number {
    const { fixed, starts } = this;
    const first = this.slots + 2;
    let at = copyBytes(fixed, starts[first]!, starts[first + 1]!, target, pos);
    for (let slot = 0; slot < this.slots; slot++) {
      at = copyBytes(bytes, found[from + 2 * slot]!, found[from + 2 * slot + 1]!, target, at);
      at = copyBytes(fixed, starts[first + slot + 1]!, starts[first + slot + 2]!, target, at);
    }
    return at;
  }
}

/** Whether `bytes` from `at` on holds `fixed[from, to)`; a loop, as a Buffer#compare call costs more than its bytes. */
function sameBytes(bytes: Uint8Array, at: number, fixed: Uint8Array, from: number, to: number): boolean {
  for (let i = from, j = at; i < to; i++, j++) if (bytes[j] !== fixed[i]) return false;
  return true;
}

/** Slices at most this long are copied byte by byte: a token's text is a few bytes, and a call is dearer. */
const SHORT_COPY = 64;

/**
 * Copies `source[start, end)` to `target` at `at`; returns where the copy ends. Buffer#copy of part of a
 * buffer makes a view of it on every call in Node 20 (a garbage object per token), and for a token's few bytes
 * a loop is quicker on Node 24 too.
 */
export function copyBytes(source: Uint8Array, start: number, end: number, target: Uint8Array, at: number): number {
  if (end - start > SHORT_COPY) {
    target.set(source.subarray(start, end), at);
    return at + end - start;
  }
  let to = at;
  for (let i = start; i < end; i++) target[to++] = source[i]!;
  return to;
}

/**
 * Each event's pieces as they go on the wire (the prefix before its first, the blank line after its last),
 * one event after the other in one buffer, and where each piece starts, with each event's end after its
 * pieces' starts.
 */
function wireBytes(prefix: string, events: ReadonlyArray<readonly string[]>): [Buffer, Int32Array] {
  const parts = events.map((pieces) =>
    pieces.map((piece, i) => `${i === 0 ? prefix : ''}${piece}${i === pieces.length - 1 ? '\n\n' : ''}`),
  );
  const starts = new Int32Array(parts.reduce((count, event) => count + event.length + 1, 0));
  let bound = 0;
  let at = 0;
  for (const event of parts) {
    for (const part of event) {
      starts[bound++] = at;
      at += Buffer.byteLength(part);
    }
    starts[bound++] = at;
  }
  // Not from Buffer's shared pool: a template lives as long as its stream, and a pooled slice would keep a
  // whole pool slab alive with it.
  const bytes = Buffer.allocUnsafeSlow(at);
  bytes.write(parts.flat().join(''));
  return [bytes, starts];
}

// The bytes after a backslash that JSON.stringify writes: " \ b f n r t. Its \u escapes (control characters,
// lone surrogates) are left to the string path, with \/ and any other escape.
const SHORT_ESCAPE = new Uint8Array(128);
for (const byte of [0x22, 0x5c, 0x62, 0x66, 0x6e, 0x72, 0x74]) SHORT_ESCAPE[byte] = 1;

/**
 * Where the string body starting at `start` ends (the index of its closing quote), when it is written as
 * JSON.stringify writes strings, in well-formed UTF-8; -1 when it is not, or does not end in `bytes`.
 */
export function stringEnd(bytes: Uint8Array, start: number): number {
  const length = bytes.length;
  for (let i = start; i < length; i++) {
    const byte = bytes[i]!;
    if (byte === 0x22) return i;
    if (byte < 0x20) return -1;
    if (byte === 0x5c) {
      const next = bytes[i + 1];
      if (next === undefined || next >= 0x80 || SHORT_ESCAPE[next] === 0) return -1;
      i++;
    } else if (byte >= 0x80) {
      const size = sequenceLength(bytes, i);
      if (size === 0) return -1;
      i += size - 1;
    }
  }
  return -1;
}

/**
 * The length of the well-formed UTF-8 sequence at `i` (Unicode's table 3-7: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0.
 */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i]!;
  const second = bytes[i + 1] ?? 0;
  const cont = (at: number) => ((bytes[at] ?? 0) & 0xc0) === 0x80;
  if (lead >= 0xc2 && lead <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    const low = lead === 0xe0 ? 0xa0 : 0x80;
    const high = lead === 0xed ? 0x9f : 0xbf;
    return second >= low && second <= high && cont(i + 2) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const low = lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xf4 ? 0x8f : 0xbf;
    return second >= low && second <= high && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

/** Streaming UTF-8 decoding for upstream bodies. */
export interface Utf8Decoder {
  /** The text of `chunk`; a character cut at its end is held back until the rest of it comes. */
  write(chunk: Uint8Array): string;
  /** The body ended: what was held back, as U+FFFD. */
  end(): string;
}

/**
 * Decodes as a streaming `TextDecoder('utf-8')` does (a BOM at the very start dropped, each invalid
 * sequence one U+FFFD, the same text from each chunk), for a fraction of its cost: Node's TextDecoder
 * leaves its fast path once asked to stream, which made decoding the largest part of relaying a token.
 * Whole characters are decoded by Buffer#toString, which replaces invalid sequences by the same rule.
 * (Node's StringDecoder is as fast but holds back and replaces some invalid sequences otherwise, so the text
 * of a chunk would differ from TextDecoder's.)
 */
export function createUtf8Decoder(): Utf8Decoder {
  let held: Buffer | undefined;
  let bomChecked = false;
  const text = (decoded: string) => {
    // As TextDecoder does: the first character decoded is dropped when it is a BOM, whatever chunk it is in.
    if (bomChecked || decoded === '') return decoded;
    bomChecked = true;
    return decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  };
  return {
    write(chunk) {
      let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (held) {
        bytes = Buffer.concat([held, bytes]);
        held = undefined;
      }
      const cut = startOfCutCharacter(bytes);
      if (cut < bytes.length) held = Buffer.from(bytes.subarray(cut));
      return text(bytes.toString('utf8', 0, cut));
    },
    end() {
      const rest = held ? held.toString('utf8') : '';
      held = undefined;
      return text(rest);
    },
  };
}

/**
 * Where a character cut off by the end of `bytes` starts: a lead byte followed by fewer continuation bytes
 * than it needs, each one allowed in its place (a streaming decoder waits for the rest of exactly those).
 * `bytes.length` when the bytes end on a whole character or on an invalid sequence, which is decoded now.
 */
function startOfCutCharacter(bytes: Buffer): number {
  const length = bytes.length;
  for (let back = 1; back <= 3 && back <= length; back++) {
    const byte = bytes[length - back]!;
    if (byte < 0x80) return length;
    if (byte < 0xc0) continue; // a continuation byte: the lead is further back
    const needs =
      byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
    if (back >= needs) return length;
    if (back === 1) return length - 1;
    // The second byte of E0, ED, F0 and F4 sequences has a narrower range (no overlong forms, no surrogates,
    // nothing past U+10FFFF); the later ones may be any continuation byte.
    const second = bytes[length - back + 1]!;
    const [low, high] =
      byte === 0xe0
        ? [0xa0, 0xbf]
        : byte === 0xed
          ? [0x80, 0x9f]
          : byte === 0xf0
            ? [0x90, 0xbf]
            : byte === 0xf4
              ? [0x80, 0x8f]
              : [0x80, 0xbf];
    return second >= low && second <= high ? length - back : length;
  }
  return length;
}

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// A streamed reply's chunks written straight to the caller's socket, one buffer each.
//
// `res.write` puts every chunk of a chunked HTTP/1.1 body on the socket as three pieces (its size line, the
// bytes, a CRLF): it corks the socket, queues the three, and uncorks in a process.nextTick, which gathers them
// into one writev. Per token that is a tick callback, three queued writes and the writev's array: about a
// quarter of the memory the edge allocated while relaying 10,000 streams (bench:streams, sampled). Framing the
// chunk in the buffer the relay writes anyway costs a few bytes, and the socket takes it in one plain write;
// in the same bench the edge's CPU time fell by about a tenth.
//
// A chunk is framed in one shared buffer when its socket has nothing queued: the socket almost always takes
// a token's few hundred bytes whole, in the write call, and the buffer is free again when the call returns.
// Only a write the socket queues or sends in part still reads its buffer afterwards; the shared buffer is then
// left to that write and a new one made (writeChunk). A chunk of a fresh buffer per token instead walks
// through new memory, a pool slab every few dozen tokens, all of it garbage a moment later.

/** The shared buffer's size: Buffer's own pool slab, so a queued chunk holds no more than a pooled one would. */
const SHARED_BYTES = 8 * 1024;
let shared = Buffer.allocUnsafeSlow(SHARED_BYTES);

const CR = 0x0d;
const LF = 0x0a;
const HEX_DIGITS = '0123456789abcdef';

/**
 * The caller's socket, when a chunked reply may be written to it directly: its head is out (the caller has
 * just flushed it) and the socket is this response's own (a response queued behind another on the same
 * connection has none yet), so nothing of the response is held back by Node and bytes written to the socket
 * follow everything `res` wrote. Undefined otherwise (an HTTP/1.0 caller, whose body is not chunked, among
 * them): then `res.write` it is.
 */
export function chunkedSocket(res: ServerResponse): Socket | undefined {
  const socket = res.socket;
  if (!res.chunkedEncoding || !socket || socket.destroyed || !socket.writable) return undefined;
  return socket;
}

/** Where the body of a chunk of `size` bytes starts in its buffer: after its size in hex and a CRLF. */
export function chunkBodyStart(size: number): number {
  let digits = 1;
  for (let rest = size >>> 4; rest > 0; rest >>>= 4) digits += 1;
  return digits + 2;
}

/**
 * A buffer for one chunk with a body of `size` bytes (more than none: an empty chunk ends the body), its
 * size line and closing CRLF written; the body goes at chunkBodyStart(size). A chunk for `socket` (written
 * with writeChunk, before any other chunk is made) is framed in the shared buffer when the socket has nothing
 * queued and the chunk fits.
 */
export function chunkBuffer(size: number, socket?: Socket): Buffer {
  const start = chunkBodyStart(size);
  const length = start + size + 2;
  const buffer =
    socket !== undefined && socket.writableLength === 0 && length <= SHARED_BYTES
      ? shared.subarray(0, length)
      : Buffer.allocUnsafe(length);
  let rest = size;
  for (let at = start - 3; at >= 0; at--) {
    buffer[at] = HEX_DIGITS.charCodeAt(rest & 0xf);
    rest >>>= 4;
  }
  buffer[start - 2] = CR;
  buffer[start - 1] = LF;
  buffer[start + size] = CR;
  buffer[start + size + 1] = LF;
  return buffer;
}

/** `body` (not empty) framed as one chunk (for `socket`: see chunkBuffer). */
export function chunkOf(body: string | Uint8Array, socket?: Socket): Buffer {
  if (typeof body === 'string') {
    const size = Buffer.byteLength(body);
    const chunk = chunkBuffer(size, socket);
    chunk.write(body, chunkBodyStart(size));
    return chunk;
  }
  const chunk = chunkBuffer(body.length, socket);
  chunk.set(body, chunkBodyStart(body.length));
  return chunk;
}

/**
 * Writes a chunk made for `socket` and returns what `socket.write` did. A chunk in the shared buffer that the
 * socket did not take whole (it queued it, or sent part and waits to send the rest) is still read from: the
 * buffer is left to it, and the next chunk gets a new one.
 */
export function writeChunk(socket: Socket, chunk: Buffer): boolean {
  const taken = socket.write(chunk);
  if (chunk.buffer === shared.buffer && socket.writableLength > 0) shared = Buffer.allocUnsafeSlow(SHARED_BYTES);
  return taken;
}

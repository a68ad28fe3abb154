import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { Logger } from '@sbc/logging';
import type { QueuedMessage } from './types';

/**
 * The embedded bus's durable outbox: messages appended to segment files under one directory, each append
 * made durable (written and fdatasync'd) before its promise resolves. Appends that arrive while a sync is in
 * flight share the next one (group commit), so a burst of calls pays for one sync, not one each.
 *
 * A segment is deleted once every message in it has been handled downstream (the bus says when); at start,
 * whatever segments remain are read back and handed to the bus again. A replay can repeat messages that were
 * handled just before a crash: consumers key on the event id, so they apply once.
 *
 * Why files and not a database table: the record only has to survive `kill -9` between "the caller saw the
 * end of its reply" and "the ledger applied it", and an fdatasync'd append is exactly that, with no second
 * database instance held in memory by the embedded process.
 *
 * Record: u32 length of the body, u32 CRC-32 of the body, body = u16 topic length, topic, u16 key length, key,
 * u32 headers-JSON length, headers JSON, value. A torn last record (a crash mid-write, never acked) fails its
 * length or CRC check and ends the segment.
 */

const SEGMENT_PATTERN = /^segment-(\d{12})\.log$/;
const HEADER_BYTES = 8;

export interface OutboxSegment {
  readonly name: string;
  /** Messages appended to this segment; replayed ones for a segment read at start. */
  count: number;
}

export interface FileOutbox {
  /** What an earlier run left unhandled, oldest first, with the segment each came from. */
  readonly recovered: ReadonlyArray<{ segment: OutboxSegment; messages: QueuedMessage[] }>;
  /** Appends to the open segment; resolves once it is on disk. Returns the segment it went to. */
  append(message: QueuedMessage): { segment: OutboxSegment; durable: Promise<void> };
  /** Starts a new segment for later appends and returns the one that was open (undefined when it is empty). */
  rotate(): OutboxSegment | undefined;
  /** Reads back a segment that `rotate` closed, once its appends are durable. */
  read(segment: OutboxSegment): QueuedMessage[];
  /** Deletes a segment whose messages have all been handled. */
  release(segment: OutboxSegment): void;
  close(): Promise<void>;
}

function segmentName(sequence: number): string {
  return `segment-${String(sequence).padStart(12, '0')}.log`;
}

function encodeRecord(message: QueuedMessage): Buffer {
  const topic = Buffer.from(message.topic, 'utf8');
  const key = Buffer.from(message.key, 'utf8');
  const headers = Buffer.from(JSON.stringify(message.headers ?? {}), 'utf8');
  const body = Buffer.allocUnsafe(2 + topic.length + 2 + key.length + 4 + headers.length + message.value.byteLength);
  let at = body.writeUInt16BE(topic.length, 0);
  at += topic.copy(body, at);
  at = body.writeUInt16BE(key.length, at);
  at += key.copy(body, at);
  at = body.writeUInt32BE(headers.length, at);
  at += headers.copy(body, at);
  Buffer.from(message.value.buffer, message.value.byteOffset, message.value.byteLength).copy(body, at);
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeUInt32BE(body.length, 0);
  header.writeUInt32BE(crc32(body), 4);
  return Buffer.concat([header, body]);
}

/** Every whole record of a segment's bytes; stops at the first torn or corrupt one. */
export function decodeSegment(bytes: Buffer): QueuedMessage[] {
  const messages: QueuedMessage[] = [];
  let at = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const checksum = bytes.readUInt32BE(at + 4);
    const start = at + HEADER_BYTES;
    if (start + length > bytes.length) break;
    const body = bytes.subarray(start, start + length);
    if (crc32(body) !== checksum) break;
    let p = 0;
    const topicLength = body.readUInt16BE(p);
    const topic = body.toString('utf8', (p += 2), (p += topicLength));
    const keyLength = body.readUInt16BE(p);
    const key = body.toString('utf8', (p += 2), (p += keyLength));
    const headersLength = body.readUInt32BE(p);
    const headers = JSON.parse(body.toString('utf8', (p += 4), (p += headersLength))) as Record<string, string>;
    messages.push({ topic, key, headers, value: new Uint8Array(body.subarray(p)) });
    at = start + length;
  }
  return messages;
}

export function openFileOutbox(options: { dir: string; logger?: Logger }): FileOutbox {
  const { dir, logger } = options;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const existing = readdirSync(dir)
    .map((name) => SEGMENT_PATTERN.exec(name))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ name: match[0], sequence: Number(match[1]) }))
    .sort((a, b) => a.sequence - b.sequence);
  const recovered = existing.map(({ name }) => {
    const messages = decodeSegment(readFileSync(path.join(dir, name)));
    return { segment: { name, count: messages.length }, messages };
  });
  if (recovered.length > 0)
    logger?.info(
      { segments: recovered.length, messages: recovered.reduce((n, r) => n + r.messages.length, 0) },
      'usage outbox: replaying what the last run left unhandled',
    );
  let sequence = (existing.at(-1)?.sequence ?? 0) + 1;

  interface OpenSegment {
    segment: OutboxSegment;
    /** Opened on the first sync, so an idle interval leaves no empty file behind. */
    file: Promise<FileHandle> | undefined;
    pending: Buffer[];
    waiters: Array<{ resolve: () => void; reject: (e: Error) => void }>;
    syncing: Promise<void> | undefined;
  }
  let current: OpenSegment = newSegment();
  const openSegments = new Set([current]);

  function newSegment(): OpenSegment {
    return {
      segment: { name: segmentName(sequence++), count: 0 },
      file: undefined,
      pending: [],
      waiters: [],
      syncing: undefined,
    };
  }

  /** One write and one fdatasync for everything appended since the last; runs again if more arrived meanwhile. */
  function sync(target: OpenSegment): void {
    if (target.syncing || target.pending.length === 0) return;
    const bytes = Buffer.concat(target.pending.splice(0));
    const waiters = target.waiters.splice(0);
    target.syncing = (async () => {
      try {
        target.file ??= open(path.join(dir, target.segment.name), 'a', 0o600);
        const file = await target.file;
        await file.write(bytes);
        await file.datasync();
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        logger?.error({ err: error, segment: target.segment.name }, 'usage outbox: append failed');
        for (const waiter of waiters) waiter.reject(error as Error);
      } finally {
        target.syncing = undefined;
        sync(target);
      }
    })();
  }

  async function closeSegment(target: OpenSegment): Promise<void> {
    sync(target); // appends of this tick would otherwise be written after the file is closed
    while (target.syncing) await target.syncing;
    openSegments.delete(target);
    if (target.file) await (await target.file).close();
  }

  return {
    recovered,

    append(message) {
      const target = current;
      target.pending.push(encodeRecord(message));
      target.segment.count++;
      const durable = new Promise<void>((resolve, reject) => target.waiters.push({ resolve, reject }));
      // Appends of the same tick (and of the time a sync is in flight) share one sync.
      if (!target.syncing) setImmediate(() => sync(target));
      return { segment: target.segment, durable };
    },

    rotate() {
      if (current.segment.count === 0) return undefined;
      const previous = current;
      current = newSegment();
      openSegments.add(current);
      void closeSegment(previous).catch((error: unknown) =>
        logger?.error({ err: error }, 'usage outbox: closing a segment failed'),
      );
      return previous.segment;
    },

    read(segment) {
      return decodeSegment(readFileSync(path.join(dir, segment.name)));
    },

    release(segment) {
      rmSync(path.join(dir, segment.name), { force: true });
    },

    async close() {
      await Promise.all([...openSegments].map((target) => closeSegment(target)));
    },
  };
}

import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { Logger } from '@sbc/logging';
import { SpoolUnavailableError } from './errors';
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
 *
 * Every write goes at the segment's known good length, never in append mode: the bytes of a failed or short write
 * (a disk that filled) are overwritten by the next one, and are truncated away before the outbox takes appends
 * again, so no acknowledged record ever sits behind a torn one (which would end the segment there on replay).
 * After a failed write the outbox refuses appends until a truncate and sync of the segment succeed (retried on a
 * timer). With `maxBytes`, an append past the bound is refused too: what is on disk stays bounded.
 */

const SEGMENT_PATTERN = /^segment-(\d{12})\.log$/;
const HEADER_BYTES = 8;

export interface OutboxSegment {
  readonly name: string;
  /**
   * Messages appended to this segment and not refused; for a segment found at open, unknown (-1) until it is
   * read: an earlier run's segments are read when their turn comes, never all at once.
   */
  count: number;
  /** Bytes of the segment on disk (or on their way there). */
  bytes: number;
}

/** The part of a file handle the outbox writes through (a test may hand in one that fails). */
export type SegmentFile = Pick<FileHandle, 'write' | 'datasync' | 'truncate' | 'close'>;

export interface FileOutboxOptions {
  dir: string;
  logger?: Logger;
  /** Most bytes on disk (recovered segments included); past it appends are refused. Default: no bound. */
  maxBytes?: number;
  /** After a failed write, how often a repair (truncate to the good length, sync) is tried; default 1 s. */
  repairEveryMs?: number;
  /** Opens a new segment's file for writing; default `fs.open(path, 'w', 0o600)`. */
  openFile?: (file: string) => Promise<SegmentFile>;
}

interface OutboxStats {
  /** Bytes of every segment on disk, recovered ones included. */
  bytes: number;
  maxBytes: number;
  /** False after a failed write until the repair succeeds: appends are refused meanwhile. */
  writable: boolean;
}

export interface FileOutbox {
  readonly dir: string;
  /** What an earlier run left unhandled, oldest first: segments to read (`stream` or `read`) when their turn comes. */
  readonly recovered: ReadonlyArray<OutboxSegment>;
  /**
   * Appends to the open segment; resolves once it is on disk. Returns the segment it went to. Rejects at once with
   * `SpoolUnavailableError` when the outbox is at `maxBytes` or not repaired after a failed write.
   */
  append(message: QueuedMessage): { segment: OutboxSegment; durable: Promise<void> };
  /** Starts a new segment for later appends and returns the one that was open (undefined when it is empty). */
  rotate(): OutboxSegment | undefined;
  /** Reads back a whole segment that `rotate` closed (or an earlier run left), once its appends are durable. */
  read(segment: OutboxSegment): QueuedMessage[];
  /** Reads a closed segment in batches of at most `batchSize` records, holding one chunk of the file at a time. */
  stream(segment: OutboxSegment, batchSize: number): AsyncIterable<QueuedMessage[]>;
  /** Deletes a segment whose messages have all been handled. */
  release(segment: OutboxSegment): void;
  stats(): OutboxStats;
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
  return decodeRecords(bytes).messages;
}

/** The whole records at the start of `bytes`, and how many bytes they take (a torn or corrupt one ends them). */
function decodeRecords(bytes: Buffer): { messages: QueuedMessage[]; used: number; corrupt: boolean } {
  const messages: QueuedMessage[] = [];
  let at = 0;
  let corrupt = false;
  while (at + HEADER_BYTES <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const checksum = bytes.readUInt32BE(at + 4);
    const start = at + HEADER_BYTES;
    if (start + length > bytes.length) break;
    const body = bytes.subarray(start, start + length);
    if (crc32(body) !== checksum) {
      corrupt = true;
      break;
    }
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
  return { messages, used: at, corrupt };
}

/** Chunks read from a segment when streaming it; a record larger than this is read whole. */
const STREAM_CHUNK_BYTES = 1024 * 1024;

export function openFileOutbox(options: FileOutboxOptions): FileOutbox {
  const { dir, logger } = options;
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const repairEveryMs = options.repairEveryMs ?? 1_000;
  const openFile = options.openFile ?? ((file: string) => open(file, 'w', 0o600));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const existing = readdirSync(dir)
    .map((name) => SEGMENT_PATTERN.exec(name))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ name: match[0], sequence: Number(match[1]) }))
    .sort((a, b) => a.sequence - b.sequence);
  // Only their sizes now: a large spool is read segment by segment as it is sent, never whole at start.
  const recovered: OutboxSegment[] = existing.map(({ name }) => ({
    name,
    count: -1,
    bytes: statSync(path.join(dir, name)).size,
  }));
  let bytesOnDisk = recovered.reduce((sum, segment) => sum + segment.bytes, 0);
  if (recovered.length > 0)
    logger?.info(
      { dir, segments: recovered.length, bytes: bytesOnDisk },
      'usage outbox: replaying what the last run left unhandled',
    );
  let sequence = (existing.at(-1)?.sequence ?? 0) + 1;
  /** Set by a failed write; appends are refused until the repair of `broken` succeeds. */
  let broken: OpenSegment | undefined;
  let repairTimer: NodeJS.Timeout | undefined;
  let closed = false;

  interface OpenSegment {
    segment: OutboxSegment;
    /** Opened on the first sync, so an idle interval leaves no empty file behind. */
    file: Promise<SegmentFile> | undefined;
    /** Bytes known to be on disk, whole records only: where the next write goes. */
    good: number;
    pending: Buffer[];
    waiters: Array<{ resolve: () => void; reject: (e: Error) => void }>;
    syncing: Promise<void> | undefined;
  }
  let current: OpenSegment = newSegment();
  const openSegments = new Set([current]);

  function newSegment(): OpenSegment {
    return {
      segment: { name: segmentName(sequence++), count: 0, bytes: 0 },
      file: undefined,
      good: 0,
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
        target.file ??= openFile(path.join(dir, target.segment.name));
        const file = await target.file;
        // At the good length, written whole: a short write goes on from where it stopped.
        for (let done = 0; done < bytes.length;) {
          const { bytesWritten } = await file.write(bytes, done, bytes.length - done, target.good + done);
          if (bytesWritten <= 0) throw new Error(`short write to ${target.segment.name}`);
          done += bytesWritten;
        }
        await file.datasync();
        target.good += bytes.length;
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        fail(target, bytes.length, waiters.length, error);
        for (const waiter of waiters) waiter.reject(error as Error);
      } finally {
        target.syncing = undefined;
        sync(target);
      }
    })();
  }

  /** A write failed: nothing in it (nor queued behind it) was acknowledged; appends wait for the repair. */
  function fail(target: OpenSegment, lostBytes: number, lostRecords: number, error: unknown): void {
    const queued = target.pending.splice(0);
    const queuedWaiters = target.waiters.splice(0);
    const refused = new SpoolUnavailableError('failed');
    for (const waiter of queuedWaiters) waiter.reject(refused);
    const bytes = lostBytes + queued.reduce((sum, buffer) => sum + buffer.length, 0);
    target.segment.count -= lostRecords + queuedWaiters.length;
    target.segment.bytes -= bytes;
    bytesOnDisk -= bytes;
    logger?.error(
      { err: error, segment: target.segment.name, refused: lostRecords + queuedWaiters.length },
      'usage outbox: a write failed; appends are refused until the segment is repaired',
    );
    if (!broken) {
      broken = target;
      scheduleRepair();
    }
  }

  function scheduleRepair(): void {
    if (closed || repairTimer) return;
    repairTimer = setTimeout(() => {
      repairTimer = undefined;
      void repair();
    }, repairEveryMs);
    repairTimer.unref();
  }

  /** Cuts the broken segment back to its whole records, syncs it, and moves appends to a new segment. */
  async function repair(): Promise<void> {
    const target = broken;
    if (!target || closed) return;
    try {
      while (target.syncing) await target.syncing;
      if (target.file) {
        const file = await target.file;
        await file.truncate(target.good);
        await file.datasync();
      }
      broken = undefined;
      if (current === target) rotateOpen();
      logger?.warn({ segment: target.segment.name }, 'usage outbox: repaired; appends are taken again');
    } catch (error) {
      logger?.error({ err: error, segment: target.segment.name }, 'usage outbox: repair failed; trying again');
      scheduleRepair();
    }
  }

  async function closeSegment(target: OpenSegment): Promise<void> {
    sync(target); // appends of this tick would otherwise be written after the file is closed
    while (target.syncing) await target.syncing;
    openSegments.delete(target);
    if (target.file) await (await target.file).close();
  }

  function rotateOpen(): OutboxSegment | undefined {
    if (current.segment.count === 0 && current.pending.length === 0) return undefined;
    const previous = current;
    current = newSegment();
    openSegments.add(current);
    void closeSegment(previous).catch((error: unknown) =>
      logger?.error({ err: error }, 'usage outbox: closing a segment failed'),
    );
    return previous.segment;
  }

  return {
    dir,
    recovered,

    append(message) {
      const target = current;
      const record = encodeRecord(message);
      const refusal = broken ? 'failed' : bytesOnDisk + record.length > maxBytes ? 'full' : undefined;
      if (refusal) return { segment: target.segment, durable: Promise.reject(new SpoolUnavailableError(refusal)) };
      target.pending.push(record);
      target.segment.count++;
      target.segment.bytes += record.length;
      bytesOnDisk += record.length;
      const durable = new Promise<void>((resolve, reject) => target.waiters.push({ resolve, reject }));
      // Appends of the same tick (and of the time a sync is in flight) share one sync.
      if (!target.syncing) setImmediate(() => sync(target));
      return { segment: target.segment, durable };
    },

    rotate: rotateOpen,

    read(segment) {
      const messages = decodeSegment(readFileSync(path.join(dir, segment.name)));
      segment.count = messages.length;
      return messages;
    },

    async *stream(segment, batchSize) {
      const file = await open(path.join(dir, segment.name), 'r');
      let count = 0;
      try {
        let carry = Buffer.alloc(0);
        let position = 0;
        for (;;) {
          const chunk = Buffer.allocUnsafe(Math.max(STREAM_CHUNK_BYTES, carry.length));
          const { bytesRead } = await file.read(chunk, 0, chunk.length, position);
          position += bytesRead;
          const bytes =
            carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
          const { messages, used, corrupt } = decodeRecords(bytes);
          carry = Buffer.from(bytes.subarray(used));
          for (let at = 0; at < messages.length; at += batchSize) {
            const batch = messages.slice(at, at + batchSize);
            count += batch.length;
            yield batch;
          }
          if (corrupt || bytesRead === 0) break; // a torn or corrupt record ends the segment, as on replay
        }
      } finally {
        await file.close();
      }
      segment.count = count;
    },

    release(segment) {
      rmSync(path.join(dir, segment.name), { force: true });
      bytesOnDisk = Math.max(0, bytesOnDisk - segment.bytes);
      segment.bytes = 0;
    },

    stats() {
      return { bytes: bytesOnDisk, maxBytes, writable: !broken };
    },

    async close() {
      closed = true;
      clearTimeout(repairTimer);
      await Promise.all([...openSegments].map((target) => closeSegment(target)));
    },
  };
}

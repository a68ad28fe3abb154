import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SpoolUnavailableError } from './errors';
import { decodeSegment, openFileOutbox, type SegmentFile } from './file-outbox';
import type { QueuedMessage } from './types';

// Finding 5 of issue 53, the spool's hygiene: a write that failed never hides later acknowledged records, the spool
// has a byte bound, and an earlier run's spool is read as it is sent, not whole at start.

const message = (n: number, bytes = 4): QueuedMessage => ({
  topic: 'usage.events.v1',
  key: `acct_${n % 3}`,
  value: new Uint8Array(bytes).fill(n % 256),
  headers: { n: String(n) },
});
const numbers = (messages: QueuedMessage[]) => messages.map((m) => Number(m.headers!.n));

describe('the spool on disk', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sbc-spool-hygiene-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const segmentFile = () =>
    path.join(
      dir,
      readdirSync(dir).find((name) => name.endsWith('.log'))!,
    );

  it('the bytes a torn write left behind never hide a record acknowledged after it', async () => {
    const outbox = openFileOutbox({ dir });
    await outbox.append(message(1)).durable;
    // What a write that failed half-way (a full disk) leaves at the end of the segment.
    appendFileSync(segmentFile(), Buffer.from([0, 0, 1, 0, 9, 9, 9, 9, 1, 2, 3]));
    await outbox.append(message(2)).durable; // acknowledged: it must be replayed
    await outbox.append(message(3)).durable;
    await outbox.close();
    expect(numbers(decodeSegment(readFileSync(segmentFile())))).toEqual([1, 2, 3]);
  });

  it('after a failed write, appends are refused (never acknowledged) until the segment is repaired', async () => {
    let failNext = false;
    const openFile = async (file: string): Promise<SegmentFile> => {
      const handle = await open(file, 'w', 0o600);
      return {
        write: (async (buffer: Buffer, offset: number, length: number, position: number) => {
          if (!failNext) return handle.write(buffer, offset, length, position);
          failNext = false;
          await handle.write(buffer, offset, Math.floor(length / 2), position); // half of it reached the disk
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        }) as SegmentFile['write'],
        datasync: () => handle.datasync(),
        truncate: (length?: number) => handle.truncate(length),
        close: () => handle.close(),
      };
    };
    const outbox = openFileOutbox({ dir, openFile, repairEveryMs: 50 });
    await outbox.append(message(1)).durable;
    failNext = true;
    await expect(outbox.append(message(2)).durable).rejects.toThrow(/ENOSPC/);
    expect(outbox.stats().writable).toBe(false);
    await expect(outbox.append(message(3)).durable).rejects.toThrow(SpoolUnavailableError);
    for (let waited = 0; !outbox.stats().writable && waited < 3_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(outbox.stats().writable).toBe(true);
    await outbox.append(message(4)).durable;
    await outbox.close();
    const replayed = readdirSync(dir)
      .filter((name) => name.endsWith('.log'))
      .sort()
      .flatMap((name) => decodeSegment(readFileSync(path.join(dir, name))));
    expect(numbers(replayed)).toEqual([1, 4]); // 2 and 3 were refused, 4 is not hidden behind 2's half
  });

  it('refuses appends past its byte bound, and takes them again once sent segments are released', async () => {
    const outbox = openFileOutbox({ dir, maxBytes: 3_000 });
    const accepted: number[] = [];
    for (let n = 0; n < 10; n++) {
      const { durable } = outbox.append(message(n, 500));
      if (
        await durable.then(
          () => true,
          (error: unknown) => !(error instanceof SpoolUnavailableError),
        )
      )
        accepted.push(n);
    }
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.length).toBeLessThan(10);
    expect(outbox.stats().bytes).toBeLessThanOrEqual(3_000);
    await expect(outbox.append(message(99, 500)).durable).rejects.toMatchObject({ reason: 'full' });
    outbox.release(outbox.rotate()!);
    expect(outbox.stats().bytes).toBe(0);
    await outbox.append(message(100, 500)).durable;
    await outbox.close();
  });

  it('a large spool left by an earlier run: opened unread, each segment streamed in bounded batches', async () => {
    const first = openFileOutbox({ dir });
    const written = Array.from({ length: 3_000 }, (_, n) => message(n, 1_000)); // about 3 MB, past a read chunk
    await Promise.all(written.map((m) => first.append(m).durable));
    await first.close();
    const reopened = openFileOutbox({ dir });
    expect(reopened.recovered).toEqual([expect.objectContaining({ count: -1 })]); // not read yet
    const batches: number[] = [];
    const seen: number[] = [];
    for await (const batch of reopened.stream(reopened.recovered[0]!, 500)) {
      batches.push(batch.length);
      seen.push(...numbers(batch));
    }
    expect(Math.max(...batches)).toBeLessThanOrEqual(500);
    expect(seen).toEqual(written.map((_, n) => n));
    expect(reopened.recovered[0]!.count).toBe(3_000);
    await reopened.close();
  });
});

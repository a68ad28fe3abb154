// What each open stream keeps on a target's JavaScript heap, for bench/streams.mjs (BENCH_HEAP=1): a heap
// snapshot of the target before a case and another once every stream of it is open, counted by kind of object,
// and the difference divided by the streams. The target runs with `--heapsnapshot-signal=SIGUSR2` and
// `--diagnostic-dir`, so a signal makes it write a snapshot there (it stops for the seconds that takes).
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

/** The node flags that let `snapshot` ask a target for its heap. */
export function heapSnapshotArgs(dir) {
  return ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`];
}

/** The longest snapshot read: its text must fit in one JavaScript string (V8 allows about 512 MiB). */
const MAX_SNAPSHOT_BYTES = 500 * 2 ** 20;

/**
 * Signals `pid` to write a heap snapshot into `dir`, waits until the file is whole, and returns its census
 * (the file is removed). A snapshot of 2,000 open streams is about 150 MB, so one of more than about 6,000 is
 * too long to read.
 */
export async function snapshot(pid, dir) {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 300_000;
  let file;
  let size = -1;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`no heap snapshot from ${pid} in ${dir}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    file ??= readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (!file) continue;
    // Written in one go by the target: whole once its size stops changing and it parses.
    const now = statSync(path.join(dir, file)).size;
    if (now !== size || now === 0) {
      size = now;
      continue;
    }
    if (now > MAX_SNAPSHOT_BYTES) {
      rmSync(path.join(dir, file));
      throw new Error(
        `the heap snapshot is ${Math.round(now / 2 ** 20)} MiB, too long to read: use BENCH_HEAP with fewer streams ` +
          `(2,000 is plenty)`,
      );
    }
    try {
      const census = censusOf(JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
      rmSync(path.join(dir, file));
      return census;
    } catch (error) {
      // Not whole yet after all: wait for it to grow.
      if (!(error instanceof SyntaxError)) throw error;
      size = -1;
    }
  }
}

/**
 * Objects and their own bytes by kind: objects and closures by constructor or function name, everything else
 * (strings, arrays, V8's internals) by type alone.
 */
function censusOf(heap) {
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const stride = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const kinds = new Map();
  for (let i = 0; i < heap.nodes.length; i += stride) {
    const type = types[heap.nodes[i + typeAt]];
    const named = type === 'object' || type === 'closure' || type === 'native';
    const kind = named ? `${type} ${heap.strings[heap.nodes[i + nameAt]].slice(0, 60) || '(anonymous)'}` : type;
    const entry = kinds.get(kind) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += heap.nodes[i + sizeAt];
    kinds.set(kind, entry);
  }
  return kinds;
}

/** What `after` holds more than `before`, per stream: objects and bytes in all, and the kinds with the most objects. */
export function perStream(before, after, streams, top = 12) {
  const kinds = [];
  let count = 0;
  let bytes = 0;
  for (const [kind, entry] of after) {
    const was = before.get(kind) ?? { count: 0, bytes: 0 };
    const more = { kind, count: (entry.count - was.count) / streams, bytes: (entry.bytes - was.bytes) / streams };
    count += more.count;
    bytes += more.bytes;
    kinds.push(more);
  }
  for (const [kind, was] of before) {
    if (after.has(kind)) continue;
    count -= was.count / streams;
    bytes -= was.bytes / streams;
  }
  kinds.sort((a, b) => b.count - a.count);
  return {
    objects: Math.round(count),
    kib: Math.round((bytes / 1024) * 10) / 10,
    top: kinds
      .slice(0, top)
      .map((k) => ({ kind: k.kind, count: Math.round(k.count * 10) / 10, bytes: Math.round(k.bytes) })),
  };
}

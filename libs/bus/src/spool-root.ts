import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from '@sbc/logging';

/**
 * The spool's root, shared by every edge (a ReadWriteMany volume in Kubernetes, or one disk): each edge process
 * spools into a directory of its own, made fresh at each start, and keeps a lease file in it renewed. A directory
 * whose lease has not changed for `leaseMs` (its edge is gone: deleted by a scale-in, drained off a node, killed,
 * or restarted as a new process), or whose edge released it on a clean stop, is adopted by a live edge: renamed
 * into a name of its own (rename is atomic, so one edge wins), leased anew, and sent to the broker from there.
 * An edge's spool therefore outlives its pod without pinning a pod to a volume.
 *
 * Why not lock files or flock: a dead holder leaves a lock behind, and flock over NFS is not to be relied on. A
 * lease judged by an observer's own clock needs no clock agreement between nodes: the observer notes when it
 * first saw the lease's content and adopts only once it saw no change for `leaseMs`. The owner fences itself: it
 * calls its lease valid only while its last renewal is younger than `leaseMs / 2`, and the spool refuses appends
 * otherwise, so an edge that stalled (a frozen process, a hung volume) never writes into a directory another
 * edge may be draining.
 */

const LEASE = 'lease';

export interface SpoolRootOptions {
  root: string;
  /** Names this process's directory; default `<hostname>-<random>`, new at every start. */
  owner?: string;
  /** A lease unchanged this long belongs to an edge that is gone; default 30 s. */
  leaseMs?: number;
  logger?: Logger;
}

export interface SpoolRoot {
  /** This process's own spool directory. */
  readonly ownDir: string;
  /** Whether this process still holds its lease (renewed within `leaseMs / 2`): appends are refused otherwise. */
  leaseValid(): boolean;
  /** Looks at the other directories; returns those it adopted now (renamed to names this process holds). */
  adoptOrphans(): Promise<string[]>;
  /** Foreign directories that look abandoned (lease not changing) and are not adopted yet. */
  orphans(): number;
  /** Forgets an adopted directory once it is drained, and deletes it. */
  releaseAdopted(dir: string): Promise<void>;
  /** Stops renewing; the own directory is removed when empty, else its lease is marked released for adoption. */
  close(ownSpoolEmpty: boolean): Promise<void>;
}

interface Seen {
  content: string;
  since: number;
}

export function openSpoolRoot(options: SpoolRootOptions): SpoolRoot {
  const { root, logger } = options;
  const leaseMs = options.leaseMs ?? 30_000;
  const owner = options.owner ?? `${hostname()}-${randomBytes(4).toString('hex')}`;
  mkdirSync(root, { recursive: true, mode: 0o700 });
  moveLegacySegments(root, logger);
  const ownDir = path.join(root, owner);
  mkdirSync(ownDir, { recursive: true, mode: 0o700 });
  /** Directories this process holds a lease on: its own and those it adopted. */
  const held = new Set<string>([ownDir]);
  const seen = new Map<string, Seen>();
  let beat = 0;
  let lastRenewedAt = Date.now();
  let closed = false;
  const leaseOf = (released = false) => JSON.stringify({ owner, pid: process.pid, beat, released });
  writeFileSync(path.join(ownDir, LEASE), leaseOf(), { mode: 0o600 });

  /** Writes each held lease anew (beat + 1), replacing it whole by a rename. */
  async function renew(): Promise<void> {
    beat++;
    const dirs = [...held];
    const results = await Promise.allSettled(dirs.map((dir) => writeLease(dir, leaseOf())));
    // A directory released meanwhile (drained and deleted) is no loss.
    const lost = dirs.filter((dir, i) => results[i]!.status === 'rejected' && held.has(dir));
    if (lost.length === 0) lastRenewedAt = Date.now();
    else logger?.error({ dirs: lost }, 'usage spool: renewing a lease failed; spooling stops until it succeeds');
  }
  const renewer = setInterval(() => void renew(), Math.max(50, Math.floor(leaseMs / 6)));
  renewer.unref();

  return {
    ownDir,

    leaseValid: () => !closed && Date.now() - lastRenewedAt < leaseMs / 2,

    async adoptOrphans() {
      const adopted: string[] = [];
      const now = Date.now();
      const present = new Set<string>();
      for (const entry of readdirSync(root, { withFileTypes: true })) {
        const dir = path.join(root, entry.name);
        if (!entry.isDirectory() || held.has(dir)) continue;
        present.add(dir);
        const content = readLease(dir);
        const before = seen.get(dir);
        if (!before || before.content !== content) seen.set(dir, { content, since: now });
        const released = content.includes('"released":true');
        if (!released && now - (seen.get(dir)?.since ?? now) < leaseMs) continue;
        const mine = path.join(root, `adopted-${randomBytes(6).toString('hex')}`);
        try {
          await rename(dir, mine); // one edge wins; the others find it gone
        } catch {
          continue;
        }
        seen.delete(dir);
        held.add(mine);
        await writeLease(mine, leaseOf()).catch(() => undefined); // renewed with the others from now on
        logger?.warn(
          { from: entry.name, dir: mine, released },
          'usage spool: adopted the spool of an edge that is gone',
        );
        adopted.push(mine);
      }
      for (const dir of seen.keys()) if (!present.has(dir)) seen.delete(dir);
      return adopted;
    },

    orphans() {
      const now = Date.now();
      let count = 0;
      for (const { since } of seen.values()) if (now - since >= leaseMs) count++;
      return count + [...held].filter((dir) => dir !== ownDir).length;
    },

    async releaseAdopted(dir) {
      held.delete(dir);
      await rm(dir, { recursive: true, force: true });
    },

    async close(ownSpoolEmpty) {
      closed = true;
      clearInterval(renewer);
      // Adopted directories not drained yet are left for the next edge to adopt at once.
      for (const dir of held) {
        if (dir === ownDir && ownSpoolEmpty) await rm(dir, { recursive: true, force: true });
        else await writeLease(dir, leaseOf(true)).catch(() => undefined);
      }
    },
  };
}

async function writeLease(dir: string, content: string): Promise<void> {
  const temporary = path.join(dir, `${LEASE}.tmp`);
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path.join(dir, LEASE));
}

function readLease(dir: string): string {
  try {
    return readFileSync(path.join(dir, LEASE), 'utf8');
  } catch {
    return '';
  }
}

/**
 * A spool written before spools had directories of their own lies in the root itself: its segments move into a
 * directory released at once, so the first scan of any edge adopts and sends them.
 */
function moveLegacySegments(root: string, logger: Logger | undefined): void {
  const segments = readdirSync(root).filter((name) => /^segment-\d{12}\.log$/.test(name));
  if (segments.length === 0) return;
  const dir = path.join(root, `legacy-${randomBytes(6).toString('hex')}`);
  mkdirSync(dir, { mode: 0o700 });
  for (const name of segments) {
    try {
      renameSync(path.join(root, name), path.join(dir, name));
    } catch {
      // Another edge moved it first.
    }
  }
  writeFileSync(path.join(dir, LEASE), JSON.stringify({ owner: 'legacy', released: true }), { mode: 0o600 });
  logger?.info({ dir, segments: segments.length }, 'usage spool: moved a spool of the earlier layout for adoption');
  if (readdirSync(dir).length === 1) rmSync(dir, { recursive: true, force: true });
}

import type { Logger } from '@sbc/logging';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import { purgeExpiredResponses } from '../store/responses';

export interface ResponsePurgeDeps {
  db: RunsDb;
  logger: Logger;
  /** Time between purges; the first runs at start. */
  intervalMs: number;
  /** Told how many responses each purge deleted (for the metric). */
  onPurged?: (count: number) => void;
  /** What one pass deletes, and its name in the logs; expired stored responses unless told otherwise. */
  purge?: (now: Date) => Promise<number>;
  what?: string;
}

export interface ResponsePurge {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Deletes expired stored responses every `intervalMs` (reads already skip them; this gives their space back and
 * takes them off their owner's bounds). Every replica runs one; the purge is safe to run concurrently.
 */
export function createResponsePurge(deps: ResponsePurgeDeps): ResponsePurge {
  let stopping = false;
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  const purge = deps.purge ?? ((now: Date) => purgeExpiredResponses(deps.db, now));
  const what = deps.what ?? 'expired stored responses';

  async function run(): Promise<void> {
    while (!stopping) {
      try {
        const purged = await purge(new Date());
        deps.onPurged?.(purged);
        if (purged > 0) deps.logger.info({ purged }, `${what} purged`);
      } catch (err) {
        if (!stopping) deps.logger.warn({ err }, `purging ${what} failed`);
      }
      if (stopping) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deps.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  return {
    start() {
      loop = run();
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}

import type { PrismaClient } from '../generated/prisma/client';
import { listDeadLetters, markReplayed, type DeadLetter } from '../store/dead-letters';
import { applyGenerations } from '../store/generations';
import { describeFailure } from './failure-kind';
import { decodeUsageEvent } from './usage-consumer';

const USAGE = 'usage: main.js dead-letters list [--all] | replay [id…]';

/**
 * `main.js dead-letters list [--all]` prints the parked usage events not replayed yet (with --all, every one);
 * `main.js dead-letters replay [id…]` applies the given ones (by default every one not replayed yet), made
 * storable by the decoder, exactly as the consumer would, and marks each applied one replayed. Applying is
 * keyed by event id, so replaying an event that did land after all changes nothing. Resolves to the exit code:
 * 0, or 1 when some could not be applied (they stay parked, with the reason printed), 2 for bad arguments.
 */
export async function deadLettersCommand(
  db: PrismaClient,
  args: string[],
  write: (line: string) => void,
): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'list' && rest.every((arg) => arg === '--all')) {
    const letters = await listDeadLetters(db, { all: rest.includes('--all') });
    for (const letter of letters) write(describe(letter));
    write(`${letters.length} dead letter${letters.length === 1 ? '' : 's'}`);
    return 0;
  }
  if (action === 'replay' && rest.every((arg) => /^\d+$/.test(arg))) {
    const ids = rest.length > 0 ? rest.map((id) => BigInt(id)) : undefined;
    const letters = await listDeadLetters(db, { ids });
    let failed = 0;
    for (const letter of letters) {
      const outcome = await replay(db, letter);
      if (outcome.startsWith('not replayed')) failed++;
      write(`${letter.id} ${outcome}`);
    }
    for (const id of ids?.filter((id) => !letters.some((l) => l.id === id)) ?? []) {
      failed++;
      write(`${id} not found`);
    }
    return failed > 0 ? 1 : 0;
  }
  write(USAGE);
  return 2;
}

async function replay(db: PrismaClient, letter: DeadLetter): Promise<string> {
  if (letter.replayedAt) return `already replayed at ${letter.replayedAt.toISOString()}`;
  const decoded = decodeUsageEvent(letter.event);
  if ('problem' in decoded) return `not replayed: ${decoded.problem}`;
  try {
    const applied = await applyGenerations(db, [decoded.row]);
    await markReplayed(db, letter.id);
    return applied.inserted > 0 ? 'replayed' : 'replayed (its row was already there)';
  } catch (error) {
    return `not replayed: ${describeFailure(error)}`;
  }
}

function describe(letter: DeadLetter): string {
  const state = letter.replayedAt ? `replayed ${letter.replayedAt.toISOString()}` : 'pending';
  return [
    letter.id,
    letter.createdAt.toISOString(),
    state,
    letter.eventId ?? '-',
    `${letter.topic}[${letter.partition}]@${letter.offset}`,
    `key=${letter.key}`,
    letter.error,
  ].join('\t');
}

import type { AuthorBlock } from '../generated/prisma/client';
import type { Db } from './db';

export type BlockRow = AuthorBlock;
export const BLOCK_REASONS = ['operator', 'optout', 'blocked_us'] as const;
export type BlockReason = (typeof BLOCK_REASONS)[number];

export async function listBlocks(db: Db): Promise<BlockRow[]> {
  return db.authorBlock.findMany({ orderBy: { createdAt: 'desc' } });
}

export async function isBlocked(db: Db, authorId: string): Promise<boolean> {
  return (await db.authorBlock.count({ where: { authorId } })) > 0;
}

/** Blocks an author, or changes the recorded reason of an existing block (the first block time is kept). */
export async function blockAuthor(
  db: Db,
  authorId: string,
  reason: BlockReason,
  by: string | undefined,
): Promise<BlockRow> {
  return db.authorBlock.upsert({
    where: { authorId },
    create: { authorId, reason, blockedBy: by },
    update: { reason, blockedBy: by },
  });
}

export async function unblockAuthor(db: Db, authorId: string): Promise<BlockRow | null> {
  const row = await db.authorBlock.findUnique({ where: { authorId } });
  if (!row) return null;
  await db.authorBlock.delete({ where: { authorId } });
  return row;
}

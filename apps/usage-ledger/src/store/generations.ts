import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** One `usage_generations` row as written from a usage event. */
export type GenerationRow = Prisma.UsageGenerationCreateManyInput;

/**
 * Records one model call unless its request id is already recorded (`INSERT … ON CONFLICT DO NOTHING`):
 * the first write wins and a redelivered event changes nothing. A single statement, so it is committed when
 * the promise resolves. Returns whether this call inserted the row.
 */
export async function insertGeneration(db: PrismaClient, row: GenerationRow): Promise<boolean> {
  const { count } = await db.usageGeneration.createMany({ data: [row], skipDuplicates: true });
  return count === 1;
}

import type { Prisma, PrismaClient } from '../generated/prisma/client';

export type XBuildsDb = PrismaClient;
export type Tx = Prisma.TransactionClient;
export type Db = XBuildsDb | Tx;

/** Room for an interactive transaction that may wait on an advisory lock behind other replicas. */
export const TX_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

/** Advisory-lock ids (64-bit) of the lane: intake decisions, and claims together with queue reordering. */
export const INTAKE_LOCK = 0x7862_0001n;
export const DISPATCH_LOCK = 0x7862_0002n;

export async function advisoryLock(tx: Tx, id: bigint): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${id})`;
}

/** The unique index a PostgreSQL unique violation names, when the error is one. */
export function violatedIndex(error: unknown): string | undefined {
  const text =
    error instanceof Error ? `${error.message} ${JSON.stringify((error as { meta?: unknown }).meta ?? {})}` : '';
  if (!/unique|23505|P2002/i.test(text + String((error as { code?: unknown })?.code ?? ''))) return undefined;
  for (const name of [
    'build_jobs_one_active_per_author',
    'build_jobs_one_active_per_conversation',
    'post_id',
    'idempotency_key',
    'slug',
  ]) {
    if (text.includes(name)) return name;
  }
  return 'unknown';
}

import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import type { CallerKey as CallerKeyRow } from '../generated/prisma/client';

export type { CallerKeyRow };

export function findKeyByHash(db: AccountDb, keyHash: Buffer): Promise<CallerKeyRow | null> {
  return db.callerKey.findUnique({ where: { keyHash: new Uint8Array(keyHash) } });
}

/**
 * Sets `revoked_at` once; revoking an already revoked key keeps the first time. Returns null when the key
 * is not on this user's account, so another account's key ids are indistinguishable from missing ones.
 */
export async function revokeKey(db: AccountDb, userId: string, keyId: string, now: Date): Promise<CallerKeyRow | null> {
  const key = await db.callerKey.findFirst({ where: { id: keyId, userId } });
  if (!key) return null;
  if (key.revokedAt) return key;
  await db.callerKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: now } });
  return db.callerKey.findUnique({ where: { id: keyId } });
}

/** Moves `last_used_at` forward only, so batches arriving out of order never move it back. */
export async function recordKeyUse(db: AccountDb, uses: { keyId: string; usedAt: Date }[]): Promise<void> {
  for (const use of uses) {
    await db.callerKey.updateMany({
      where: { id: use.keyId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: use.usedAt } }] },
      data: { lastUsedAt: use.usedAt },
    });
  }
}

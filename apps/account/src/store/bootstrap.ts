import { hashSecret, maskSecret, newId } from '@sbc/ids';
import { PRESETS } from '@sbc/scopes';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';

/**
 * Makes sure the owner user and a Full access key with exactly the configured secret exist. Idempotent on
 * restart; a bootstrap key that was revoked stays revoked.
 */
export async function ensureBootstrap(
  db: AccountDb,
  bootstrap: { key: string; email: string },
): Promise<{ userId: string; keyId: string; created: boolean }> {
  const keyHash = new Uint8Array(hashSecret(bootstrap.key));
  return db.$transaction(async (tx) => {
    const existing = await tx.callerKey.findUnique({ where: { keyHash } });
    if (existing) return { userId: existing.userId, keyId: existing.id, created: false };
    const email = bootstrap.email.toLowerCase();
    const user =
      (await tx.user.findUnique({ where: { email } })) ?? (await tx.user.create({ data: { id: newId('usr'), email } }));
    const key = await tx.callerKey.create({
      data: {
        id: newId('key'),
        userId: user.id,
        name: 'bootstrap',
        keyHash,
        mask: maskSecret(bootstrap.key),
        scopes: [...PRESETS.full_access],
        route: 'auto',
        mode: 'model',
      },
    });
    return { userId: user.id, keyId: key.id, created: true };
  });
}

/**
 * The owner a previous start bootstrapped, for a start without SBC_BOOTSTRAP_KEY (services mode): the user
 * with the bootstrap e-mail as it exists now. Read once at start, so an address signed up later does not
 * become the owner until a restart, and then only if SBC_BOOTSTRAP_EMAIL names it.
 */
export async function findOwnerId(db: AccountDb, email: string): Promise<string | undefined> {
  const user = await db.user.findUnique({ where: { email: email.toLowerCase() }, select: { id: true } });
  return user?.id;
}

import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import { findKeyByHash, type CallerKeyRow } from './keys';

/** What a credential's hash resolves to. Keys come back revoked or not (a revoked key is 403, not 401). */
export type CredentialOwner =
  | { kind: 'key'; key: CallerKeyRow }
  | { kind: 'session'; userId: string }
  | { kind: 'device'; userId: string; deviceId: string };

/**
 * Looks a credential up by the SHA-256 of its secret in the three credential tables. Secrets are random and
 * prefixed by kind, so at most one table holds a hash. Expired and ended sessions are unknown.
 */
export async function findCredentialOwner(db: AccountDb, hash: Buffer, now: Date): Promise<CredentialOwner | null> {
  const key = await findKeyByHash(db, hash);
  if (key) return { kind: 'key', key };
  const bytes = new Uint8Array(hash);
  const session = await db.session.findUnique({ where: { tokenHash: bytes } });
  if (session)
    return session.endedAt === null && session.expiresAt > now ? { kind: 'session', userId: session.userId } : null;
  const device = await db.device.findUnique({ where: { tokenHash: bytes } });
  if (device) return { kind: 'device', userId: device.userId, deviceId: device.id };
  return null;
}

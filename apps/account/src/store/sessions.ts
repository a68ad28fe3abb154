import { Prisma, type PrismaClient as AccountDb, type User as UserRow } from '../generated/prisma/client';

export type { UserRow };

/** Creates a user; null when the email is taken (emails are stored lowercased, so that is case-blind). */
export async function createUser(
  db: AccountDb,
  user: { id: string; email: string; passwordHash: string },
): Promise<UserRow | null> {
  try {
    return await db.user.create({ data: user });
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return null;
    throw error;
  }
}

export function findUserByEmail(db: AccountDb, email: string): Promise<UserRow | null> {
  return db.user.findUnique({ where: { email } });
}

export async function createSession(
  db: AccountDb,
  session: { tokenHash: Buffer; userId: string; expiresAt: Date },
): Promise<void> {
  await db.session.create({ data: { ...session, tokenHash: new Uint8Array(session.tokenHash) } });
}

/** Ends a live session of this user; ending one already ended keeps its first time. */
export async function endSession(db: AccountDb, userId: string, tokenHash: Buffer, now: Date): Promise<void> {
  await db.session.updateMany({
    where: { tokenHash: new Uint8Array(tokenHash), userId, endedAt: null },
    data: { endedAt: now },
  });
}

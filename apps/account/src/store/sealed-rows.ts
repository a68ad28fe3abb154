import { ApiError } from '@sbc/errors';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import { Prisma, type PrismaClient as AccountDb } from '../generated/prisma/client';
import type { AuditChange, AuditDb, RecordChange } from './audit';
import type { SecretCipher } from './secrets';
import { firstFreeSlug, slugBase } from './upstream-slug';

// What custom endpoints (upstreams.ts) and MCP tool servers (mcp-servers.ts) have in common: rows of one account
// named by a slug, dialled at a URL with credentials sealed to their owner, saved and deleted with their audit
// record, and listed a page at a time.

// RFC 9110 token characters: anything else cannot be sent as a header name.
export const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

export function isNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025';
}

/** A sealed secret opened; '' when none is stored. */
export function openSecret(cipher: SecretCipher, ciphertext: Uint8Array | null, context: string): string {
  return ciphertext ? cipher.decrypt(ciphertext, context) : '';
}

/** Sealed headers opened (their string values); none when none are stored. */
export function openHeaders(
  cipher: SecretCipher,
  ciphertext: Uint8Array | null,
  context: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!ciphertext) return out;
  const parsed: unknown = JSON.parse(cipher.decrypt(ciphertext, context));
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') out[name] = value;
  }
  return out;
}

/**
 * A save and, with `record`, its audit record in one transaction: `before` reads the row as it was (null on a
 * create), `write` saves it, `changeOf` says what the audit log records of the two.
 */
export function saveRecorded<Row>(
  db: AccountDb,
  steps: {
    before: (tx: AuditDb) => Promise<Row | null>;
    write: (client: AuditDb) => Promise<Row>;
    changeOf: (before: Row | null, saved: Row) => AuditChange;
  },
  record?: RecordChange,
): Promise<Row> {
  if (!record) return steps.write(db);
  return db.$transaction(async (tx) => {
    const before = await steps.before(tx);
    const saved = await steps.write(tx);
    await record(tx, steps.changeOf(before, saved));
    return saved;
  });
}

/** A delete and, with `record`, its audit record in one transaction; null when there was no such row. */
export async function deleteRecorded<Row>(
  db: AccountDb,
  remove: (client: AuditDb) => Promise<Row>,
  changeOf: (removed: Row) => AuditChange,
  record?: RecordChange,
): Promise<Row | null> {
  try {
    return record
      ? await db.$transaction(async (tx) => {
          const removed = await remove(tx);
          await record(tx, changeOf(removed));
          return removed;
        })
      : await remove(db);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** The `findMany` arguments of one page of an account's rows. */
interface OwnedPageArgs {
  where: { userId: string; id?: { lt: string } | { gt: string } };
  orderBy: { id: 'asc' | 'desc' };
  take: number;
}

/** One page of an account's rows, newest first (ids are time-sortable). */
export async function listOwnedPage<Row, View extends { id: string }>(
  findMany: (args: OwnedPageArgs) => Promise<Row[]>,
  userId: string,
  query: PageQuery,
  toView: (row: Row) => View,
): Promise<ListEnvelope<View>> {
  const range = keysetRange(query);
  const rows = await findMany({
    where: { userId, ...(range.cursor ? { id: range.cursor } : {}) },
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows.map(toView), query, (view) => view.id);
}

const SLUG_ATTEMPTS = 5;

/**
 * Creates a row named after `label`: a slug derived from it and made unique among `slugsStartingWith` (the
 * account's slugs with that start); a concurrent create that took the same slug a moment earlier (a `conflict`)
 * just moves this one to the next.
 */
export async function createWithFreeSlug<View>(
  label: string,
  slugsStartingWith: (base: string) => Promise<Array<{ slug: string }>>,
  create: (slug: string) => Promise<View>,
): Promise<View> {
  const base = slugBase(label);
  for (let attempt = 1; ; attempt++) {
    const slug = firstFreeSlug(base, new Set((await slugsStartingWith(base)).map((row) => row.slug)));
    try {
      return await create(slug);
    } catch (error) {
      if (attempt >= SLUG_ATTEMPTS || !(error instanceof ApiError && error.code === 'conflict')) throw error;
    }
  }
}

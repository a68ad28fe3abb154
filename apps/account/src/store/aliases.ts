import { findCatalogModel } from '@sbc/catalog';
import { ApiError, type Issue } from '@sbc/errors';
import { Prisma, type PrismaClient as AccountDb, type Alias as AliasRow } from '../generated/prisma/client';
import type { RecordChange } from './audit';

export type AliasCustody = 'envelope' | 'device-held';

/** A token as stored: lowercase, without its "@" (checked by the table too). */
const ALIAS_TOKEN_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export interface SaveAliasInput {
  userId: string;
  /** With or without its leading "@", any case: `@Claude` and `claude` name one alias. */
  token: string;
  vendor: string;
  modelId: string;
  /** Defaults to the catalog's display name for the model, else the model id. */
  label?: string;
  /** Defaults to the catalog's tier for the model, else `standard`. */
  tier?: string;
  custody?: AliasCustody;
}

export interface AliasView {
  /** Without its "@"; responses add it. */
  token: string;
  vendor: string;
  modelId: string;
  label: string;
  tier: string;
  custody: AliasCustody;
  /** The user's alias revision at this alias's last write. */
  rev: number;
  updatedAt: Date;
}

/** Aliases are mentioned as `@token` and typed by hand, so the stored form drops the "@" and the case. */
export function normalizeAliasToken(token: string): string {
  return (token.startsWith('@') ? token.slice(1) : token).toLowerCase();
}

function validate(token: string, input: SaveAliasInput): void {
  const issues: Issue[] = [];
  if (!ALIAS_TOKEN_PATTERN.test(token)) {
    issues.push({
      path: 'token',
      code: 'invalid_string',
      message: 'token must be 1-64 of a-z, 0-9, ".", "_" and "-", after an optional "@"',
    });
  }
  if (input.vendor.length < 1 || input.vendor.length > 64)
    issues.push({ path: 'vendor', code: 'invalid_string', message: 'vendor must be 1-64 characters' });
  if (input.modelId.length < 1 || input.modelId.length > 256)
    issues.push({ path: 'model_id', code: 'invalid_string', message: 'model_id must be 1-256 characters' });
  if (input.custody !== undefined && input.custody !== 'envelope' && input.custody !== 'device-held') {
    issues.push({ path: 'custody', code: 'invalid_value', message: 'custody must be envelope or device-held' });
  }
  if (issues.length > 0) throw ApiError.invalid(issues);
}

/**
 * Creates or overwrites one personal alias. Every write bumps the user's alias revision, under the user row's
 * lock, so concurrent writes get distinct, increasing revisions and a device that saw rev N misses nothing.
 */
/** An alias's change as the audit log records it; the alias is named by its token, with its `@`. */
function aliasChange(action: string, before: AliasRow | null, after: AliasRow | null) {
  const row = (after ?? before)!;
  return { action, resourceType: 'alias', resourceId: `@${row.token}`, ownerUserId: row.userId, before, after };
}

export async function saveAlias(db: AccountDb, input: SaveAliasInput, record?: RecordChange): Promise<AliasView> {
  const token = normalizeAliasToken(input.token);
  validate(token, input);
  const model = findCatalogModel(input.modelId);
  const label = input.label ?? model?.display_name ?? input.modelId;
  const tier = input.tier ?? model?.tier ?? 'standard';
  const custody = input.custody ?? 'envelope';
  try {
    const row = await db.$transaction(async (tx) => {
      const user = await tx.user.update({
        where: { id: input.userId },
        data: { aliasRev: { increment: 1 } },
        select: { aliasRev: true },
      });
      const now = new Date();
      const fields = {
        vendor: input.vendor,
        modelId: input.modelId,
        label,
        tier,
        custody,
        rev: user.aliasRev,
        updatedAt: now,
      };
      const before = record
        ? await tx.alias.findUnique({ where: { userId_token: { userId: input.userId, token } } })
        : null;
      const saved = await tx.alias.upsert({
        where: { userId_token: { userId: input.userId, token } },
        create: { userId: input.userId, token, ...fields, createdAt: now },
        update: fields,
      });
      await record?.(tx, aliasChange(before ? 'alias.update' : 'alias.create', before, saved));
      return saved;
    });
    return toView(row);
  } catch (error) {
    // P2025: the update found no user row.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') {
      throw new ApiError('not_found', 'No such user.', { cause: error });
    }
    throw error;
  }
}

/**
 * Deletes one personal alias and bumps the user's alias revision. Deleting an alias the user does not have
 * changes nothing: `deleted` is false and the revision stays, so devices are not told of a change that was not.
 */
export async function deleteAlias(
  db: AccountDb,
  userId: string,
  rawToken: string,
  record?: RecordChange,
): Promise<{ token: string; rev: number; deleted: boolean }> {
  const token = normalizeAliasToken(rawToken);
  return db.$transaction(async (tx) => {
    const before = await tx.alias.findUnique({ where: { userId_token: { userId, token } } });
    const removed = await tx.alias.deleteMany({ where: { userId, token } });
    if (removed.count === 0 || !before) return { token, rev: await aliasRevOf(tx, userId), deleted: false };
    await record?.(tx, aliasChange('alias.delete', before, null));
    const user = await tx.user.update({
      where: { id: userId },
      data: { aliasRev: { increment: 1 } },
      select: { aliasRev: true },
    });
    return { token, rev: Number(user.aliasRev), deleted: true };
  });
}

/** The user's alias revision: what a device compares with the last one it saw. */
export async function aliasRevOf(db: Pick<AccountDb, 'user'>, userId: string): Promise<number> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { aliasRev: true } });
  if (!user) throw new ApiError('not_found', 'No such user.');
  return Number(user.aliasRev);
}

/** The user's personal aliases, by token. */
export async function listAliases(db: AccountDb, userId: string): Promise<AliasView[]> {
  const rows = await db.alias.findMany({ where: { userId }, orderBy: { token: 'asc' } });
  return rows.map(toView);
}

function toView(row: AliasRow): AliasView {
  return {
    token: row.token,
    vendor: row.vendor,
    modelId: row.modelId,
    label: row.label,
    tier: row.tier,
    custody: row.custody === 'device-held' ? 'device-held' : 'envelope',
    rev: Number(row.rev),
    updatedAt: row.updatedAt,
  };
}

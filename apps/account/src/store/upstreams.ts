import { ApiError, type Issue } from '@sbc/errors';
import { newId } from '@sbc/ids';
import type { ListEnvelope, PageQuery } from '@sbc/pagination';
import { Prisma, type PrismaClient as AccountDb, type Upstream as UpstreamRow } from '../generated/prisma/client';
import type { AuditDb, RecordChange } from './audit';
import { stringsOf } from './json-columns';
import {
  createWithFreeSlug,
  deleteRecorded,
  HEADER_NAME_PATTERN,
  isHttpUrl,
  isNotFound,
  isUniqueViolation,
  listOwnedPage,
  openHeaders,
  openSecret,
  saveRecorded,
} from './sealed-rows';
import { SecretDecryptError, type SecretCipher } from './secrets';
import {
  auditableBetaPolicy,
  betaPolicyColumn,
  betaPolicyIssuesOf,
  betaPolicyOf,
  type StoredBetaPolicy,
} from './upstream-beta-policy';

export type EndpointDialect = 'openai' | 'anthropic' | 'auto';
export const ENDPOINT_DIALECTS: readonly EndpointDialect[] = ['openai', 'anthropic', 'auto'];

/** The endpoint id: lowercase, starts with a letter or digit, at most 48 characters (checked by the table too). */
export const UPSTREAM_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,47}$/;

/** The highest routing weight (CONTRACTS "Routing policy"; checked by the table too); 0 is standby. */
const MAX_UPSTREAM_WEIGHT = 100;

/** The spec's UpstreamProbe; `dialect` is what a probe of an `auto` endpoint found it speaks. */
export interface UpstreamProbe {
  ok: boolean;
  models_found?: number;
  error?: string;
  at?: string;
  dialect?: 'openai' | 'anthropic';
  /** For an `auto` endpoint: why the probe took it to speak `dialect`. */
  dialect_reason?: string;
}

/**
 * Creates the endpoint `(userId, slug)` or replaces its dial. Optional fields left undefined keep what is stored
 * (their defaults on create): the API key is never shown back, so a client re-saving an endpoint cannot resend
 * it. `null` clears a secret or the probe.
 */
export interface SaveUpstreamInput {
  userId: string;
  /** A team's shared endpoint; null or absent for a personal one. */
  orgId?: string | null;
  slug: string;
  label: string;
  baseUrl: string;
  dialect: EndpointDialect;
  apiKey?: string | null;
  headers?: Record<string, string> | null;
  models?: string[];
  modelNames?: Record<string, string>;
  modelMeta?: Record<string, unknown>;
  probe?: UpstreamProbe | null;
  /** Routing weight, 0-100 (0 = standby); a new endpoint without one gets the column's default, 1. */
  weight?: number;
  /** How the caller's `anthropic-beta` values reach the endpoint; null (or an empty policy) removes it. */
  anthropicBeta?: { drop?: string[]; map?: Record<string, string> } | null;
}

/** An endpoint without its secrets: what the account surface may show. */
export interface UpstreamView {
  id: string;
  userId: string;
  orgId: string | null;
  slug: string;
  label: string;
  baseUrl: string;
  dialect: EndpointDialect;
  hasApiKey: boolean;
  headerNames: string[];
  models: string[];
  modelNames: Record<string, string>;
  modelMeta: Record<string, unknown>;
  probe: UpstreamProbe | null;
  probedAt: Date | null;
  weight: number;
  anthropicBeta: StoredBetaPolicy | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An endpoint as the edge dials it: secrets decrypted, dialect settled. */
export interface RoutingUpstreamRecord {
  id: string;
  orgId: string | null;
  slug: string;
  label: string;
  dialect: 'openai' | 'anthropic';
  baseUrl: string;
  /** '' when the endpoint needs no key. */
  apiKey: string;
  headers: Record<string, string>;
  models: string[];
  probedAt: Date | null;
  weight: number;
  anthropicBeta: StoredBetaPolicy | null;
}

// The secret's owner and column are bound into each ciphertext, so one copied into another row does not open.
const apiKeyContext = (userId: string) => `upstreams.api_key:${userId}`;
const headersContext = (userId: string) => `upstreams.headers:${userId}`;

function validate(input: SaveUpstreamInput): void {
  const issues: Issue[] = [];
  if (!UPSTREAM_SLUG_PATTERN.test(input.slug)) {
    issues.push({
      path: 'slug',
      code: 'invalid_string',
      message: 'slug must be 1-48 of a-z, 0-9 and "-", starting with a letter or digit',
    });
  }
  if (input.label.trim().length === 0)
    issues.push({ path: 'label', code: 'too_small', message: 'label must not be empty' });
  if (!isHttpUrl(input.baseUrl))
    issues.push({ path: 'base_url', code: 'invalid_url', message: 'base_url must be an http(s) URL' });
  if (!ENDPOINT_DIALECTS.includes(input.dialect)) {
    issues.push({ path: 'dialect', code: 'invalid_value', message: 'dialect must be one of openai, anthropic, auto' });
  }
  if (input.weight !== undefined && !isWeight(input.weight)) {
    issues.push({
      path: 'weight',
      code: 'invalid_value',
      message: `weight must be a whole number from 0 (standby) to ${MAX_UPSTREAM_WEIGHT}`,
    });
  }
  for (const name of Object.keys(input.headers ?? {})) {
    if (!HEADER_NAME_PATTERN.test(name))
      issues.push({ path: `headers.${name}`, code: 'invalid_key', message: 'not a valid header name' });
  }
  issues.push(...betaPolicyIssuesOf(input.anthropicBeta));
  if (issues.length > 0) throw ApiError.invalid(issues);
}

function isWeight(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= MAX_UPSTREAM_WEIGHT;
}

/** The columns a save may write besides the dial; each absent key keeps what is stored. */
interface OptionalColumns {
  apiKeyCiphertext?: Uint8Array<ArrayBuffer> | null;
  headerNames?: string[];
  headersCiphertext?: Uint8Array<ArrayBuffer> | null;
  models?: string[];
  modelNames?: Record<string, string>;
  modelMeta?: Prisma.InputJsonObject;
  probe?: Prisma.InputJsonObject | typeof Prisma.DbNull;
  probedAt?: Date;
  weight?: number;
  anthropicBeta?: Prisma.InputJsonObject | typeof Prisma.DbNull;
}

function optionalColumns(cipher: SecretCipher, input: SaveUpstreamInput, now: Date): OptionalColumns {
  const columns: OptionalColumns = {};
  if (input.apiKey !== undefined) {
    columns.apiKeyCiphertext = input.apiKey ? cipher.encrypt(input.apiKey, apiKeyContext(input.userId)) : null;
  }
  if (input.headers !== undefined) {
    const headers = input.headers ?? {};
    columns.headerNames = Object.keys(headers);
    columns.headersCiphertext =
      columns.headerNames.length > 0 ? cipher.encrypt(JSON.stringify(headers), headersContext(input.userId)) : null;
  }
  if (input.models !== undefined) columns.models = input.models;
  if (input.modelNames !== undefined) columns.modelNames = input.modelNames;
  if (input.modelMeta !== undefined) columns.modelMeta = input.modelMeta as Prisma.InputJsonObject;
  if (input.probe !== undefined) columns.probe = input.probe === null ? Prisma.DbNull : { ...input.probe };
  // Only an answered probe moves probed_at: a failed one must not make the endpoint look freshly seen.
  if (input.probe?.ok) columns.probedAt = input.probe.at ? new Date(input.probe.at) : now;
  if (input.weight !== undefined) columns.weight = input.weight;
  if (input.anthropicBeta !== undefined) columns.anthropicBeta = betaPolicyColumn(input.anthropicBeta);
  return columns;
}

/**
 * How a save meets an existing row: `upsert` creates or replaces (seeding, routing writes), `create` refuses a
 * slug the account already uses (409 `conflict`), `update` refuses a slug it does not (404 `not_found`) so a
 * concurrent delete is not undone.
 */
export type SaveMode = 'upsert' | 'create' | 'update';

/** An endpoint's change as the audit log records it: its view, which holds no secret (`has_api_key`, header names). */
function endpointChange(action: string, before: UpstreamRow | null, after: UpstreamRow | null) {
  const row = (after ?? before)!;
  return {
    action,
    resourceType: 'endpoint',
    resourceId: row.id,
    ownerUserId: row.userId,
    teamId: row.orgId,
    before: before && auditableView(before),
    after: after && auditableView(after),
  };
}

function auditableView(row: UpstreamRow) {
  const view = toView(row);
  return { ...view, anthropicBeta: auditableBetaPolicy(view.anthropicBeta) };
}

/** With `record`, the save and its audit record are one transaction. */
export async function saveUpstream(
  db: AccountDb,
  cipher: SecretCipher,
  input: SaveUpstreamInput,
  mode: SaveMode = 'upsert',
  record?: RecordChange,
): Promise<UpstreamView> {
  validate(input);
  const now = new Date();
  const columns = optionalColumns(cipher, input, now);
  const dial = { orgId: input.orgId ?? null, label: input.label, baseUrl: input.baseUrl, dialect: input.dialect };
  const where = { userId_slug: { userId: input.userId, slug: input.slug } };
  const create = {
    id: newId('ups'),
    userId: input.userId,
    slug: input.slug,
    ...dial,
    ...columns,
    createdAt: now,
    updatedAt: now,
  };
  const update = { ...dial, ...columns, updatedAt: now };
  const write = (client: AuditDb) =>
    mode === 'create'
      ? client.upstream.create({ data: create })
      : mode === 'update'
        ? client.upstream.update({ where, data: update })
        : client.upstream.upsert({ where, create, update });
  const before = (tx: AuditDb) => (mode === 'create' ? Promise.resolve(null) : tx.upstream.findUnique({ where }));
  const changeOf = (was: UpstreamRow | null, saved: UpstreamRow) =>
    endpointChange(was ? 'endpoint.update' : 'endpoint.create', was, saved);
  try {
    return toView(await saveRecorded(db, { before, write, changeOf }, record));
  } catch (error) {
    if (isUniqueViolation(error)) {
      const message =
        mode === 'create'
          ? 'This account already has an endpoint with this slug.'
          : 'Another endpoint of this team already uses this slug.';
      throw new ApiError('conflict', message, { param: 'slug', cause: error });
    }
    if (isNotFound(error))
      throw new ApiError('not_found', 'No such endpoint on this account.', { param: 'slug', cause: error });
    throw error;
  }
}

/**
 * Saves a new endpoint (`mode` create). Without an explicit slug, one is derived from the label and made unique
 * on the account; a concurrent create that took the same slug a moment earlier just moves this one to the next.
 */
export async function createUpstream(
  db: AccountDb,
  cipher: SecretCipher,
  input: Omit<SaveUpstreamInput, 'slug'> & { slug?: string },
  record?: RecordChange,
): Promise<UpstreamView> {
  if (input.slug !== undefined) return saveUpstream(db, cipher, { ...input, slug: input.slug }, 'create', record);
  return createWithFreeSlug(
    input.label,
    (base) =>
      db.upstream.findMany({ where: { userId: input.userId, slug: { startsWith: base } }, select: { slug: true } }),
    (slug) => saveUpstream(db, cipher, { ...input, slug }, 'create', record),
  );
}

/** An endpoint with its secrets opened, for re-probing and for telling whether an edit changes the dial. */
export interface UpstreamDial {
  view: UpstreamView;
  apiKey: string;
  headers: Record<string, string>;
}

export async function findUpstreamDial(
  db: AccountDb,
  cipher: SecretCipher,
  userId: string,
  slug: string,
): Promise<UpstreamDial | null> {
  const row = await db.upstream.findUnique({ where: { userId_slug: { userId, slug } } });
  if (!row) return null;
  return { view: toView(row), ...openDial(row, cipher) };
}

/** One page of the account's endpoints, newest first (ids are time-sortable). */
export async function listUpstreamPage(
  db: AccountDb,
  userId: string,
  query: PageQuery,
): Promise<ListEnvelope<UpstreamView>> {
  return listOwnedPage((args) => db.upstream.findMany(args), userId, query, toView);
}

/** Removes an endpoint and, with its row, the stored key and headers; null when the account has no such slug. */
export async function deleteUpstream(
  db: AccountDb,
  userId: string,
  slug: string,
  record?: RecordChange,
): Promise<UpstreamView | null> {
  const remove = (client: AuditDb) => client.upstream.delete({ where: { userId_slug: { userId, slug } } });
  const row = await deleteRecorded(db, remove, (removed) => endpointChange('endpoint.delete', removed, null), record);
  return row && toView(row);
}

/** What a probe writes into a row: its report and the models (and names) folded in. */
export interface ProbeFold {
  probe: UpstreamProbe;
  models: string[];
  modelNames: Record<string, string>;
}

/** Stores a probe's outcome on the row `id` of `userId`; null when the row is gone (deleted while it was probed). */
export async function recordProbe(
  db: AccountDb,
  userId: string,
  id: string,
  fold: ProbeFold,
): Promise<UpstreamView | null> {
  const now = new Date();
  try {
    const row = await db.upstream.update({
      where: { id, userId },
      data: {
        probe: { ...fold.probe },
        models: fold.models,
        modelNames: fold.modelNames,
        // Only an answered probe moves probed_at: a failed one must not make the endpoint look freshly seen.
        ...(fold.probe.ok ? { probedAt: fold.probe.at ? new Date(fold.probe.at) : now } : {}),
        updatedAt: now,
      },
    });
    return toView(row);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Every model id the account's own endpoints list (an alias naming one is available). */
export async function listEndpointModels(db: AccountDb, userId: string): Promise<string[]> {
  const rows = await db.upstream.findMany({ where: { userId }, select: { models: true } });
  return [...new Set(rows.flatMap((row) => stringsOf(row.models)))];
}

/**
 * The endpoints one caller's key may route to: the user's personal endpoints, and with `orgId` (a team key)
 * that team's shared ones. A personal endpoint shadows a team endpoint with the same slug, so `<slug>/<model>`
 * always means one endpoint. Rows whose secrets do not decrypt are left out and reported, so one damaged row
 * cannot take every route of the account down.
 */
export async function listUpstreamsForRouting(
  db: AccountDb,
  cipher: SecretCipher,
  userId: string,
  orgId?: string,
  onUndecryptable: (upstreamId: string, error: SecretDecryptError) => void = () => undefined,
): Promise<RoutingUpstreamRecord[]> {
  const rows = await db.upstream.findMany({
    where: orgId ? { OR: [{ userId, orgId: null }, { orgId }] } : { userId, orgId: null },
    orderBy: { id: 'asc' },
  });
  const personal = rows.filter((row) => row.orgId === null && row.userId === userId);
  const personalSlugs = new Set(personal.map((row) => row.slug));
  const team = rows.filter((row) => row.orgId !== null && !personalSlugs.has(row.slug));
  const out: RoutingUpstreamRecord[] = [];
  for (const row of [...personal, ...team]) {
    try {
      out.push(toRouting(row, cipher));
    } catch (error) {
      if (!(error instanceof SecretDecryptError)) throw error;
      onUndecryptable(row.id, error);
    }
  }
  return out;
}

function toRouting(row: UpstreamRow, cipher: SecretCipher): RoutingUpstreamRecord {
  const probe = probeOf(row.probe);
  return {
    id: row.id,
    orgId: row.orgId,
    slug: row.slug,
    label: row.label,
    dialect: routingDialect(row.dialect, probe, row.baseUrl),
    baseUrl: row.baseUrl,
    ...openDial(row, cipher),
    models: stringsOf(row.models),
    probedAt: row.probedAt,
    weight: row.weight,
    anthropicBeta: betaPolicyOf(row.anthropicBeta),
  };
}

/**
 * What the edge speaks to an endpoint saved as `auto`: what its probe found, else a guess from the host
 * (Anthropic's own API, or a proxy that names it), else OpenAI, which most compatible servers speak.
 */
export function routingDialect(dialect: string, probe: UpstreamProbe | null, baseUrl: string): 'openai' | 'anthropic' {
  if (dialect === 'openai' || dialect === 'anthropic') return dialect;
  if (probe?.dialect === 'openai' || probe?.dialect === 'anthropic') return probe.dialect;
  let host = '';
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    // A stored URL was validated on save; an unparsable one falls through to the common case.
  }
  return host.includes('anthropic') ? 'anthropic' : 'openai';
}

/** The endpoint's API key ('' when it needs none) and headers, opened. */
function openDial(row: UpstreamRow, cipher: SecretCipher): { apiKey: string; headers: Record<string, string> } {
  return {
    apiKey: openSecret(cipher, row.apiKeyCiphertext, apiKeyContext(row.userId)),
    headers: openHeaders(cipher, row.headersCiphertext, headersContext(row.userId)),
  };
}

function stringRecord(value: Prisma.JsonValue): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, item] of Object.entries(value)) if (typeof item === 'string') out[key] = item;
  }
  return out;
}

function probeOf(value: Prisma.JsonValue): UpstreamProbe | null {
  if (!value || typeof value !== 'object' || Array.isArray(value) || typeof value.ok !== 'boolean') return null;
  return value as unknown as UpstreamProbe;
}

function toView(row: UpstreamRow): UpstreamView {
  const meta = row.modelMeta;
  return {
    id: row.id,
    userId: row.userId,
    orgId: row.orgId,
    slug: row.slug,
    label: row.label,
    baseUrl: row.baseUrl,
    dialect: row.dialect as EndpointDialect,
    hasApiKey: row.apiKeyCiphertext !== null,
    headerNames: stringsOf(row.headerNames),
    models: stringsOf(row.models),
    modelNames: stringRecord(row.modelNames),
    modelMeta: meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {},
    probe: probeOf(row.probe),
    probedAt: row.probedAt,
    weight: row.weight,
    anthropicBeta: betaPolicyOf(row.anthropicBeta),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

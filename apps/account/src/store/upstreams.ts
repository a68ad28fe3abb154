import { ApiError, type Issue } from '@sbc/errors';
import { newId } from '@sbc/ids';
import { Prisma, type PrismaClient as AccountDb, type Upstream as UpstreamRow } from '../generated/prisma/client';
import { SecretDecryptError, type SecretCipher } from './secrets';

export type UpstreamDialect = 'openai' | 'anthropic' | 'auto';
export const UPSTREAM_DIALECTS: readonly UpstreamDialect[] = ['openai', 'anthropic', 'auto'];

/** The endpoint id: lowercase, starts with a letter or digit, at most 48 characters (checked by the table too). */
export const UPSTREAM_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,47}$/;

// RFC 9110 token characters: anything else cannot be sent as a header name.
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The spec's UpstreamProbe; `dialect` is what a probe of an `auto` endpoint found it speaks. */
export interface UpstreamProbe {
  ok: boolean;
  models_found?: number;
  error?: string;
  at?: string;
  dialect?: 'openai' | 'anthropic';
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
  dialect: UpstreamDialect;
  apiKey?: string | null;
  headers?: Record<string, string> | null;
  models?: string[];
  modelNames?: Record<string, string>;
  modelMeta?: Record<string, unknown>;
  probe?: UpstreamProbe | null;
}

/** An endpoint without its secrets: what the account surface may show. */
export interface UpstreamView {
  id: string;
  userId: string;
  orgId: string | null;
  slug: string;
  label: string;
  baseUrl: string;
  dialect: UpstreamDialect;
  hasApiKey: boolean;
  headerNames: string[];
  models: string[];
  modelNames: Record<string, string>;
  modelMeta: Record<string, unknown>;
  probe: UpstreamProbe | null;
  probedAt: Date | null;
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
}

// The secret's owner and column are bound into each ciphertext, so one copied into another row does not open.
const apiKeyContext = (userId: string) => `upstreams.api_key:${userId}`;
const headersContext = (userId: string) => `upstreams.headers:${userId}`;

function validate(input: SaveUpstreamInput): void {
  const issues: Issue[] = [];
  if (!UPSTREAM_SLUG_PATTERN.test(input.slug)) {
    issues.push({ path: 'slug', code: 'invalid_string', message: 'slug must be 1-48 of a-z, 0-9 and "-", starting with a letter or digit' });
  }
  if (input.label.trim().length === 0) issues.push({ path: 'label', code: 'too_small', message: 'label must not be empty' });
  if (!isHttpUrl(input.baseUrl)) issues.push({ path: 'base_url', code: 'invalid_url', message: 'base_url must be an http(s) URL' });
  if (!UPSTREAM_DIALECTS.includes(input.dialect)) {
    issues.push({ path: 'dialect', code: 'invalid_value', message: 'dialect must be one of openai, anthropic, auto' });
  }
  for (const name of Object.keys(input.headers ?? {})) {
    if (!HEADER_NAME_PATTERN.test(name)) issues.push({ path: `headers.${name}`, code: 'invalid_key', message: 'not a valid header name' });
  }
  if (issues.length > 0) throw ApiError.invalid(issues);
}

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
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
}

function optionalColumns(cipher: SecretCipher, input: SaveUpstreamInput, now: Date): OptionalColumns {
  const columns: OptionalColumns = {};
  if (input.apiKey !== undefined) {
    columns.apiKeyCiphertext = input.apiKey ? cipher.encrypt(input.apiKey, apiKeyContext(input.userId)) : null;
  }
  if (input.headers !== undefined) {
    const headers = input.headers ?? {};
    columns.headerNames = Object.keys(headers);
    columns.headersCiphertext = columns.headerNames.length > 0 ? cipher.encrypt(JSON.stringify(headers), headersContext(input.userId)) : null;
  }
  if (input.models !== undefined) columns.models = input.models;
  if (input.modelNames !== undefined) columns.modelNames = input.modelNames;
  if (input.modelMeta !== undefined) columns.modelMeta = input.modelMeta as Prisma.InputJsonObject;
  if (input.probe !== undefined) columns.probe = input.probe === null ? Prisma.DbNull : { ...input.probe };
  // Only an answered probe moves probed_at: a failed one must not make the endpoint look freshly seen.
  if (input.probe?.ok) columns.probedAt = input.probe.at ? new Date(input.probe.at) : now;
  return columns;
}

export async function saveUpstream(db: AccountDb, cipher: SecretCipher, input: SaveUpstreamInput): Promise<UpstreamView> {
  validate(input);
  const now = new Date();
  const columns = optionalColumns(cipher, input, now);
  const dial = { orgId: input.orgId ?? null, label: input.label, baseUrl: input.baseUrl, dialect: input.dialect };
  try {
    const row = await db.upstream.upsert({
      where: { userId_slug: { userId: input.userId, slug: input.slug } },
      create: { id: newId('ups'), userId: input.userId, slug: input.slug, ...dial, ...columns, createdAt: now, updatedAt: now },
      update: { ...dial, ...columns, updatedAt: now },
    });
    return toView(row);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new ApiError('conflict', 'Another endpoint of this team already uses this slug.', { param: 'slug', cause: error });
    }
    throw error;
  }
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
    apiKey: row.apiKeyCiphertext ? cipher.decrypt(row.apiKeyCiphertext, apiKeyContext(row.userId)) : '',
    headers: row.headersCiphertext ? parseHeaders(cipher.decrypt(row.headersCiphertext, headersContext(row.userId))) : {},
    models: stringList(row.models),
    probedAt: row.probedAt,
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

function parseHeaders(json: string): Record<string, string> {
  const parsed: unknown = JSON.parse(json);
  const out: Record<string, string> = {};
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') out[name] = value;
  }
  return out;
}

function stringList(value: Prisma.JsonValue): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
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
    dialect: row.dialect as UpstreamDialect,
    hasApiKey: row.apiKeyCiphertext !== null,
    headerNames: stringList(row.headerNames),
    models: stringList(row.models),
    modelNames: stringRecord(row.modelNames),
    modelMeta: meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {},
    probe: probeOf(row.probe),
    probedAt: row.probedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

import { ApiError, type Issue } from '@sbc/errors';
import { newId } from '@sbc/ids';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import type { PrismaClient as AccountDb, McpServer as McpServerRow, Prisma } from '../generated/prisma/client';
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
import { teamNotFound } from './teams';
import { UPSTREAM_SLUG_PATTERN } from './upstreams';

/**
 * MCP tool servers (issue 51): rows of one account, slugged like endpoints (a tool's name at /mcp is
 * `<slug>__<tool>`, and a slug has no "_"). Headers and the bearer token are sealed like an endpoint's API key.
 */

/** One tool a server listed. */
export interface McpTool {
  name: string;
  description?: string;
}

/** A probe's report, stored on the row. */
export interface McpServerProbe {
  ok: boolean;
  tools_found?: number;
  error?: string;
  at?: string;
  server_name?: string;
  server_version?: string;
  protocol_version?: string;
}

/** A server without its secrets: what the account surface may show. */
export interface McpServerView {
  id: string;
  userId: string;
  slug: string;
  label: string;
  url: string;
  headerNames: string[];
  hasBearerToken: boolean;
  tools: McpTool[];
  probe: McpServerProbe | null;
  probedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A server with its secrets opened, for probing and for telling whether an edit changes the dial. */
export interface McpServerDial {
  view: McpServerView;
  headers: Record<string, string>;
  /** '' when none is stored. */
  bearerToken: string;
}

/**
 * Creates the server `(userId, slug)` or replaces it. Optional fields left undefined keep what is stored (none on
 * create): the secrets are never shown back, so a client re-saving a server cannot resend them. An empty bearer
 * token or header object removes what is stored.
 */
export interface SaveMcpServerInput {
  userId: string;
  slug: string;
  label: string;
  url: string;
  headers?: Record<string, string>;
  bearerToken?: string;
}

/** Bounds a row's credentials (the edge refuses larger bodies first; these hold for any caller of the RPC). */
const MAX_MCP_HEADERS = 32;
const MAX_MCP_HEADER_VALUE_LENGTH = 8_192;
const MAX_MCP_URL_LENGTH = 2_048;
const MAX_LABEL_LENGTH = 128;

// The secret's owner and column are bound into each ciphertext, so one copied into another row does not open.
const headersContext = (userId: string) => `mcp_servers.headers:${userId}`;
const bearerContext = (userId: string) => `mcp_servers.bearer:${userId}`;

function validate(input: SaveMcpServerInput): void {
  const issues: Issue[] = [];
  if (!UPSTREAM_SLUG_PATTERN.test(input.slug)) {
    issues.push({
      path: 'slug',
      code: 'invalid_string',
      message: 'slug must be 1-48 of a-z, 0-9 and "-", starting with a letter or digit',
    });
  }
  const label = input.label.trim();
  if (label.length === 0 || label.length > MAX_LABEL_LENGTH)
    issues.push({ path: 'label', code: 'invalid_string', message: `label must be 1-${MAX_LABEL_LENGTH} characters` });
  if (input.url.length > MAX_MCP_URL_LENGTH || !isHttpUrl(input.url))
    issues.push({ path: 'url', code: 'invalid_url', message: 'url must be an http(s) URL' });
  const headers = Object.entries(input.headers ?? {});
  if (headers.length > MAX_MCP_HEADERS)
    issues.push({ path: 'headers', code: 'too_big', message: `at most ${MAX_MCP_HEADERS} headers` });
  for (const [name, value] of headers) {
    if (!HEADER_NAME_PATTERN.test(name))
      issues.push({ path: `headers.${name}`, code: 'invalid_key', message: 'not a valid header name' });
    else if (value.length > MAX_MCP_HEADER_VALUE_LENGTH || /[\r\n\0]/.test(value))
      issues.push({ path: `headers.${name}`, code: 'invalid_string', message: 'not a valid header value' });
  }
  if (input.bearerToken !== undefined && /[\r\n\0]/.test(input.bearerToken))
    issues.push({ path: 'bearer_token', code: 'invalid_string', message: 'not a valid token' });
  if (issues.length > 0) throw ApiError.invalid(issues);
}

interface SecretColumns {
  headerNames?: string[];
  headersCiphertext?: Uint8Array<ArrayBuffer> | null;
  bearerCiphertext?: Uint8Array<ArrayBuffer> | null;
}

function secretColumns(cipher: SecretCipher, input: SaveMcpServerInput): SecretColumns {
  const columns: SecretColumns = {};
  if (input.headers !== undefined) {
    columns.headerNames = Object.keys(input.headers);
    columns.headersCiphertext =
      columns.headerNames.length > 0
        ? cipher.encrypt(JSON.stringify(input.headers), headersContext(input.userId))
        : null;
  }
  if (input.bearerToken !== undefined) {
    columns.bearerCiphertext = input.bearerToken
      ? cipher.encrypt(input.bearerToken, bearerContext(input.userId))
      : null;
  }
  return columns;
}

/** A server's change as the audit log records it: its view, which holds no secret (header names, a flag). */
function serverChange(action: string, before: McpServerRow | null, after: McpServerRow | null) {
  const row = (after ?? before)!;
  return {
    action,
    resourceType: 'mcp_server',
    resourceId: row.id,
    ownerUserId: row.userId,
    before: before && auditable(before),
    after: after && auditable(after),
  };
}

function auditable(row: McpServerRow) {
  const { tools, probe, probedAt, ...view } = toView(row);
  return { ...view, toolNames: tools.map((tool) => tool.name), probeOk: probe?.ok ?? null, probedAt };
}

/**
 * `create` refuses a slug the account already uses (409), `update` one it does not (404). With `record`, the save
 * and its audit record are one transaction.
 */
export async function saveMcpServer(
  db: AccountDb,
  cipher: SecretCipher,
  input: SaveMcpServerInput,
  mode: 'create' | 'update',
  record?: RecordChange,
): Promise<McpServerView> {
  validate(input);
  const now = new Date();
  const columns = { label: input.label.trim(), url: input.url, ...secretColumns(cipher, input) };
  const where = { userId_slug: { userId: input.userId, slug: input.slug } };
  const write = (client: AuditDb) =>
    mode === 'create'
      ? client.mcpServer.create({
          data: {
            id: newId('mcp'),
            userId: input.userId,
            slug: input.slug,
            ...columns,
            createdAt: now,
            updatedAt: now,
          },
        })
      : client.mcpServer.update({ where, data: { ...columns, updatedAt: now } });
  const before = (tx: AuditDb) => (mode === 'create' ? Promise.resolve(null) : tx.mcpServer.findUnique({ where }));
  const changeOf = (was: McpServerRow | null, saved: McpServerRow) =>
    serverChange(was ? 'mcp_server.update' : 'mcp_server.create', was, saved);
  try {
    return toView(await saveRecorded(db, { before, write, changeOf }, record));
  } catch (error) {
    if (isUniqueViolation(error))
      throw new ApiError('conflict', 'This account already has a tool server with this slug.', {
        param: 'slug',
        cause: error,
      });
    if (isNotFound(error))
      throw new ApiError('not_found', 'No such tool server on this account.', { param: 'slug', cause: error });
    throw error;
  }
}

/** Saves a new server; without an explicit slug, one is derived from the label and made unique on the account. */
export async function createMcpServer(
  db: AccountDb,
  cipher: SecretCipher,
  input: Omit<SaveMcpServerInput, 'slug'> & { slug?: string },
  record?: RecordChange,
): Promise<McpServerView> {
  if (input.slug !== undefined) return saveMcpServer(db, cipher, { ...input, slug: input.slug }, 'create', record);
  return createWithFreeSlug(
    input.label,
    (base) =>
      db.mcpServer.findMany({ where: { userId: input.userId, slug: { startsWith: base } }, select: { slug: true } }),
    (slug) => saveMcpServer(db, cipher, { ...input, slug }, 'create', record),
  );
}

export async function findMcpServerDial(
  db: AccountDb,
  cipher: SecretCipher,
  userId: string,
  slug: string,
): Promise<McpServerDial | null> {
  const row = await db.mcpServer.findUnique({ where: { userId_slug: { userId, slug } } });
  if (!row) return null;
  return { view: toView(row), ...openSecrets(row, cipher) };
}

/** One page of the account's servers, newest first (ids are time-sortable). */
export async function listMcpServerPage(
  db: AccountDb,
  userId: string,
  query: PageQuery,
): Promise<ListEnvelope<McpServerView>> {
  return listOwnedPage((args) => db.mcpServer.findMany(args), userId, query, toView);
}

/** Removes a server and its stored credentials; null when the account has no such slug. */
export async function deleteMcpServer(
  db: AccountDb,
  userId: string,
  slug: string,
  record?: RecordChange,
): Promise<McpServerView | null> {
  const remove = (client: AuditDb) => client.mcpServer.delete({ where: { userId_slug: { userId, slug } } });
  const row = await deleteRecorded(db, remove, (removed) => serverChange('mcp_server.delete', removed, null), record);
  return row && toView(row);
}

/**
 * Stores a probe's outcome on the row `id` of `userId`: an answered probe replaces the tools, a failed one keeps
 * those last seen. Null when the row is gone (deleted while it was probed).
 */
export async function recordMcpProbe(
  db: AccountDb,
  userId: string,
  id: string,
  probe: McpServerProbe,
  tools: McpTool[] | undefined,
): Promise<McpServerView | null> {
  const now = new Date();
  try {
    const row = await db.mcpServer.update({
      where: { id, userId },
      data: {
        probe: { ...probe },
        ...(probe.ok && tools ? { tools: tools.map((tool) => ({ ...tool })), probedAt: now } : {}),
        updatedAt: now,
      },
    });
    return toView(row);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** A tool server as the edge dials it. */
export interface EdgeToolServerRecord {
  slug: string;
  label: string;
  url: string;
  /** The stored headers, plus `authorization: Bearer …` when a token is stored (the token wins). */
  headers: Record<string, string>;
  tools: McpTool[];
  source: 'account' | 'team';
  ownerUserId: string;
}

/** The roles whose servers join a pool under each share policy (`share_policy` says who may add to the pool). */
const POOL_ROLES: Record<string, readonly string[]> = {
  members: ['owner', 'admin', 'editor', 'member'],
  editors: ['owner', 'admin', 'editor'],
};

/**
 * The members whose servers make up `teamId`'s pool: every member who shares MCP servers with the team
 * (`share_mcp`, set from `share_defaults.mcp` when they joined) and whose role `share_policy` lets add to the pool.
 * A removed member is no longer a member, so their servers leave the pool with them. Null when `userId` is not a
 * member: a user sees no pool of a team they are not in (a key of a team its user has left included).
 */
async function poolOwnersOf(db: AccountDb, teamId: string, userId: string): Promise<string[] | null> {
  const team = await db.team.findUnique({
    where: { id: teamId },
    select: { sharePolicy: true, members: { select: { userId: true, role: true, shareMcp: true } } },
  });
  if (!team?.members.some((member) => member.userId === userId)) return null;
  const roles = POOL_ROLES[team.sharePolicy] ?? POOL_ROLES.editors!;
  return team.members.filter((member) => member.shareMcp && roles.includes(member.role)).map((member) => member.userId);
}

/**
 * The servers one credential may use: the user's own and, with `orgId` (a team key), the team's pool
 * (`poolOwnersOf`). The caller's own server shadows a pool server of the same slug; of two pool servers with one
 * slug the older is kept. Rows whose secrets do not decrypt are left out and reported.
 */
export async function listToolServersForEdge(
  db: AccountDb,
  cipher: SecretCipher,
  userId: string,
  orgId: string | undefined,
  onUndecryptable: (serverId: string, error: SecretDecryptError) => void = () => undefined,
): Promise<EdgeToolServerRecord[]> {
  const pool = orgId ? ((await poolOwnersOf(db, orgId, userId)) ?? []) : [];
  const owners = [userId, ...pool.filter((owner) => owner !== userId)];
  const rows = await db.mcpServer.findMany({ where: { userId: { in: owners } }, orderBy: { id: 'asc' } });
  const out: EdgeToolServerRecord[] = [];
  const taken = new Set<string>();
  const own = rows.filter((row) => row.userId === userId);
  const pooled = rows.filter((row) => row.userId !== userId);
  for (const row of [...own, ...pooled]) {
    if (taken.has(row.slug)) continue;
    try {
      const { headers, bearerToken } = openSecrets(row, cipher);
      const sent = Object.fromEntries(
        Object.entries(headers).filter(([name]) => !bearerToken || name.toLowerCase() !== 'authorization'),
      );
      if (bearerToken) sent.authorization = `Bearer ${bearerToken}`;
      out.push({
        slug: row.slug,
        label: row.label,
        url: row.url,
        headers: sent,
        tools: toolsOf(row.tools),
        source: row.userId === userId ? 'account' : 'team',
        ownerUserId: row.userId,
      });
      taken.add(row.slug);
    } catch (error) {
      if (!(error instanceof SecretDecryptError)) throw error;
      onUndecryptable(row.id, error);
    }
  }
  return out;
}

/** A server of a team's pool as its members see it: no header, no token. */
export interface TeamPoolServerView {
  id: string;
  slug: string;
  label: string;
  url: string;
  tools: McpTool[];
  updatedAt: Date;
  sharedByUserId: string;
  /** '' when the user row is gone. */
  sharedByEmail: string;
}

/**
 * One page of `teamId`'s pool for `userId`, a member of any role, newest first by row id: every server of the
 * members `poolOwnersOf` names, the caller's own included. Two pool servers may share a slug; a team key uses the
 * older. Not found for a non-member, as the other team routes answer.
 */
export async function listTeamPoolPage(
  db: AccountDb,
  userId: string,
  teamId: string,
  query: PageQuery,
): Promise<ListEnvelope<TeamPoolServerView>> {
  const owners = await poolOwnersOf(db, teamId, userId);
  if (!owners) throw teamNotFound();
  const range = keysetRange(query);
  const rows = await db.mcpServer.findMany({
    where: { userId: { in: owners }, ...(range.cursor ? { id: range.cursor } : {}) },
    orderBy: { id: range.order },
    take: range.take,
  });
  const users = await db.user.findMany({
    where: { id: { in: [...new Set(rows.map((row) => row.userId))] } },
    select: { id: true, email: true },
  });
  const emails = new Map(users.map((user) => [user.id, user.email]));
  const views = rows.map((row) => ({
    id: row.id,
    slug: row.slug,
    label: row.label,
    url: row.url,
    tools: toolsOf(row.tools),
    updatedAt: row.updatedAt,
    sharedByUserId: row.userId,
    sharedByEmail: emails.get(row.userId) ?? '',
  }));
  return toPage(views, query, (view) => view.id);
}

/** The teams whose pool holds `userId`'s servers: each is told when one of them changes. */
export async function poolTeamsOf(db: AccountDb, userId: string): Promise<string[]> {
  const seats = await db.teamMember.findMany({ where: { userId, shareMcp: true }, select: { teamId: true } });
  return seats.map((seat) => seat.teamId);
}

function openSecrets(
  row: McpServerRow,
  cipher: SecretCipher,
): { headers: Record<string, string>; bearerToken: string } {
  return {
    headers: openHeaders(cipher, row.headersCiphertext, headersContext(row.userId)),
    bearerToken: openSecret(cipher, row.bearerCiphertext, bearerContext(row.userId)),
  };
}

function toolsOf(value: Prisma.JsonValue): McpTool[] {
  if (!Array.isArray(value)) return [];
  const out: McpTool[] = [];
  for (const item of value) {
    if (!item || typeof item !== 'object' || Array.isArray(item) || typeof item.name !== 'string') continue;
    out.push(
      typeof item.description === 'string' ? { name: item.name, description: item.description } : { name: item.name },
    );
  }
  return out;
}

function probeOf(value: Prisma.JsonValue): McpServerProbe | null {
  if (!value || typeof value !== 'object' || Array.isArray(value) || typeof value.ok !== 'boolean') return null;
  return value as unknown as McpServerProbe;
}

function toView(row: McpServerRow): McpServerView {
  return {
    id: row.id,
    userId: row.userId,
    slug: row.slug,
    label: row.label,
    url: row.url,
    headerNames: stringsOf(row.headerNames),
    hasBearerToken: row.bearerCiphertext !== null,
    tools: toolsOf(row.tools),
    probe: probeOf(row.probe),
    probedAt: row.probedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import type {
  CallerKeySchema,
  CreateKeyRequest,
  KeyCaller,
  UpdateKeyRequest,
} from '@sbc/proto/sbc/account/v1/account_pb';
import { effectiveScopes, isScope, OPERATOR_SCOPES } from '@sbc/scopes';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import { stringsOrNull } from '../store/json-columns';
import { wideningOf, type KeyBounds } from '../store/key-bounds';
import { findOwnKey, isOwnDevice, isTeamMember, type CallerKeyRow, type KeySettings } from '../store/keys';

const ROUTES = ['byo', 'credits', 'auto'];
const MODES = ['model', 'agent'];
// Caps are stored in an integer column.
const MAX_CREDITS = 2_147_483_647;
// The response cache keeps an entry for 30 days at most (the column's check says the same).
const MAX_CACHE_TTL_S = 2_592_000;

/** A key as the RPCs return it; `operator` says whether its owner is an operator (who alone holds builds:admin). */
export function toProtoKey(row: CallerKeyRow, operator: boolean): MessageInitShape<typeof CallerKeySchema> {
  const allowed = stringsOrNull(row.allowedModels);
  const allowedTools = stringsOrNull(row.allowedTools);
  return {
    id: row.id,
    userId: row.userId,
    name: row.name,
    mask: row.mask,
    createdAt: timestampFromDate(row.createdAt),
    lastUsedAt: row.lastUsedAt ? timestampFromDate(row.lastUsedAt) : undefined,
    revokedAt: row.revokedAt ? timestampFromDate(row.revokedAt) : undefined,
    dailyLimitCredits: row.dailyLimitCredits === null ? undefined : BigInt(row.dailyLimitCredits),
    monthlyLimitCredits: row.monthlyLimitCredits === null ? undefined : BigInt(row.monthlyLimitCredits),
    allowedModels: allowed === null ? undefined : { values: allowed },
    allowedTools: allowedTools === null ? undefined : { values: allowedTools },
    route: row.route,
    mode: row.mode,
    incognito: row.incognito,
    cacheTtlS: row.cacheTtlS,
    cacheTools: row.cacheTools,
    guardrailIds: row.guardrailIds,
    deviceId: row.deviceId ?? undefined,
    orgId: row.orgId ?? undefined,
    scopes: keyScopes(row, operator),
    rpm: row.rpm === null ? undefined : BigInt(row.rpm),
    tpm: row.tpm === null ? undefined : BigInt(row.tpm),
    batchId: row.batchId ?? undefined,
    parentKeyId: row.parentKeyId ?? undefined,
  };
}

/** The scopes a stored key acts with (see effectiveScopes). */
function keyScopes(row: CallerKeyRow, operator: boolean): string[] {
  return effectiveScopes(stringsOrNull(row.scopes), { teamKey: row.orgId !== null, operator });
}

function credits(value: bigint | undefined): number | null {
  return value === undefined ? null : Number(value);
}

/** A new key's settings as the request gives them. */
export function settingsOfCreate(request: CreateKeyRequest): KeySettings {
  return {
    name: request.name,
    scopes: request.scopes,
    allowedModels: request.allowedModels ? request.allowedModels.values : null,
    allowedTools: request.allowedTools ? request.allowedTools.values : null,
    dailyLimitCredits: credits(request.dailyLimitCredits),
    monthlyLimitCredits: credits(request.monthlyLimitCredits),
    route: request.route,
    mode: request.mode,
    incognito: request.incognito,
    deviceId: request.deviceId ?? null,
    rpm: credits(request.rpm),
    tpm: credits(request.tpm),
    cacheTtlS: request.cacheTtlS,
    cacheTools: request.cacheTools,
  };
}

/** A batch's id as the runs service makes it (apps/runs/src/store/batches.ts): its kind, then a ULID. */
const BATCH_ID = /^(batch|msgbatch)_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The batch a new key is minted for, or null for any other key. Only the runs service sets it; a malformed one is
 * refused, since the edge matches the key's calls' request ids against it (apps/gateway/src/usage/line-event-id.ts).
 */
export function batchIdOfCreate(request: CreateKeyRequest): string | null {
  if (request.batchId === undefined) return null;
  if (!BATCH_ID.test(request.batchId))
    throw new ApiError('invalid_request', 'batch_id must be a batch id (batch_… or msgbatch_… and a ULID).', {
      param: 'batch_id',
    });
  return request.batchId;
}

/**
 * A key's settings after an update: each field the request leaves unset keeps its stored value, except an
 * operator scope a non-operator's key still stores (it had no effect), which an edit drops.
 */
export function settingsOfUpdate(row: CallerKeyRow, request: UpdateKeyRequest, operator: boolean): KeySettings {
  const { allowedModels, allowedTools, dailyLimitCredits, monthlyLimitCredits, deviceId, rpm, tpm } = request;
  const stored = stringsOrNull(row.scopes);
  return {
    name: request.name ?? row.name,
    scopes: request.scopes
      ? request.scopes.values
      : (stored?.filter((scope) => operator || !OPERATOR_SCOPES.includes(scope as never)) ?? null),
    allowedModels: allowedModels
      ? allowedModels.value
        ? allowedModels.value.values
        : null
      : stringsOrNull(row.allowedModels),
    allowedTools: allowedTools
      ? allowedTools.value
        ? allowedTools.value.values
        : null
      : stringsOrNull(row.allowedTools),
    dailyLimitCredits: dailyLimitCredits ? credits(dailyLimitCredits.value) : row.dailyLimitCredits,
    monthlyLimitCredits: monthlyLimitCredits ? credits(monthlyLimitCredits.value) : row.monthlyLimitCredits,
    route: request.route ?? row.route,
    mode: request.mode ?? row.mode,
    incognito: request.incognito ?? row.incognito,
    deviceId: deviceId ? (deviceId.value ?? null) : row.deviceId,
    rpm: rpm ? credits(rpm.value) : row.rpm,
    tpm: tpm ? credits(tpm.value) : row.tpm,
    cacheTtlS: request.cacheTtlS ?? row.cacheTtlS,
    cacheTools: request.cacheTools ?? row.cacheTools,
  };
}

/** The edge validates bodies; this guards the columns against any other caller of the RPC. */
export function checkSettings(settings: KeySettings): void {
  const bad = (param: string, message: string) =>
    new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
  if (settings.name.length < 1 || settings.name.length > 64) throw bad('name', 'name must be 1 to 64 characters.');
  const unknown = settings.scopes?.find((scope) => !isScope(scope));
  if (unknown !== undefined) throw bad('scopes', `Unknown scope "${unknown}".`);
  if (!ROUTES.includes(settings.route)) throw bad('route', `route must be one of ${ROUTES.join(', ')}.`);
  if (!MODES.includes(settings.mode)) throw bad('mode', `mode must be one of ${MODES.join(', ')}.`);
  if (!Number.isInteger(settings.cacheTtlS) || settings.cacheTtlS < 0 || settings.cacheTtlS > MAX_CACHE_TTL_S)
    throw bad('cache_ttl_s', `cache_ttl_s must be a whole number of seconds from 0 to ${MAX_CACHE_TTL_S}.`);
  for (const [param, cap] of [
    ['daily_limit_tokens', settings.dailyLimitCredits],
    ['monthly_limit_tokens', settings.monthlyLimitCredits],
  ] as const) {
    if (cap !== null && (!Number.isInteger(cap) || cap < 0 || cap > MAX_CREDITS))
      throw bad(param, `${param} must be a whole number of credits from 0 to ${MAX_CREDITS}.`);
  }
  // The edge bounds rpm by the service's ceiling; the column takes any positive integer.
  for (const [param, limit] of [
    ['rpm', settings.rpm],
    ['tpm', settings.tpm],
  ] as const) {
    if (limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > MAX_CREDITS))
      throw bad(param, `${param} must be a whole number from 1 to ${MAX_CREDITS}.`);
  }
}

function boundsOf(
  settings: Pick<
    KeySettings,
    'allowedModels' | 'allowedTools' | 'dailyLimitCredits' | 'monthlyLimitCredits' | 'rpm' | 'tpm' | 'route'
  >,
  scopes: readonly string[],
  orgId: string | null,
): KeyBounds {
  const { allowedModels, allowedTools, dailyLimitCredits, monthlyLimitCredits, rpm, tpm, route } = settings;
  return { scopes, allowedModels, allowedTools, dailyLimitCredits, monthlyLimitCredits, rpm, tpm, route, orgId };
}

/** Who asks for a key change: the account, and the calling key unless a session or device token asks. */
type Caller = Pick<KeyCaller, 'userId' | 'keyId'>;

/** The calling key as stored (not the edge's cached copy); a revoked or unknown one is refused. */
async function callingKey(db: AccountDb, caller: { userId: string; keyId: string }): Promise<CallerKeyRow> {
  const row = await findOwnKey(db, caller.userId, caller.keyId);
  if (!row || row.revokedAt)
    throw new ApiError('insufficient_scope', 'This key has been revoked.', {
      extra: { required_scopes: ['keys:write'] },
    });
  return row;
}

/**
 * Refuses a key wider than the calling key (403 insufficient_scope naming the field), and builds:admin for
 * anyone but an operator, whatever the credential. Sessions and device tokens are not otherwise bounded by a key.
 */
export async function checkWithinCaller(
  db: AccountDb,
  caller: Caller,
  settings: KeySettings,
  orgId: string | null,
  operator: boolean,
): Promise<void> {
  const reserved = operator ? [] : (settings.scopes ?? []).filter((scope) => OPERATOR_SCOPES.includes(scope as never));
  if (reserved.length > 0) {
    throw new ApiError('insufficient_scope', `Only the service's operators hold ${reserved.join(', ')}.`, {
      param: 'scopes',
      extra: { required_scopes: reserved },
    });
  }
  if (!caller.keyId) return;
  const row = await callingKey(db, { ...caller, keyId: caller.keyId });
  const callerBounds = boundsOf(
    { ...row, allowedModels: stringsOrNull(row.allowedModels), allowedTools: stringsOrNull(row.allowedTools) },
    keyScopes(row, operator),
    row.orgId,
  );
  // A legacy key is bounded by the legacy set; a team key by what is stored, which the team cap only narrows.
  const widening = wideningOf(
    callerBounds,
    boundsOf(settings, settings.scopes ?? effectiveScopes(null, { teamKey: false, operator }), orgId),
  );
  if (widening) {
    throw new ApiError('insufficient_scope', widening.message, {
      param: widening.param,
      extra: { required_scopes: widening.missingScopes ?? ['keys:write'] },
    });
  }
}

/**
 * Never narrower over wider: a calling key may edit or revoke only a key whose scopes it holds all of (403
 * insufficient_scope naming the ones it lacks). Sessions and device tokens act for the whole account.
 */
export async function checkOverTarget(
  db: AccountDb,
  caller: Caller,
  target: CallerKeyRow,
  operator: boolean,
): Promise<void> {
  if (!caller.keyId) return;
  const held = keyScopes(await callingKey(db, { ...caller, keyId: caller.keyId }), operator);
  const missing = keyScopes(target, operator).filter((scope) => !held.includes(scope));
  if (missing.length > 0) {
    throw new ApiError(
      'insufficient_scope',
      `That key holds ${missing.join(', ')}, which the calling key lacks; a key never changes or revokes a wider one.`,
      {
        param: 'id',
        extra: { required_scopes: missing },
      },
    );
  }
}

/** A key's device must be paired to the account, and a team key's owner must be in the team; else 404. */
export async function checkReferences(
  db: AccountDb,
  userId: string,
  settings: KeySettings,
  orgId: string | null,
): Promise<void> {
  if (settings.deviceId !== null && !(await isOwnDevice(db, userId, settings.deviceId))) {
    throw new ApiError('not_found', 'No such device on this account.', { param: 'device_id' });
  }
  if (orgId !== null && !(await isTeamMember(db, userId, orgId))) {
    throw new ApiError('not_found', "No such team among this account's teams.", { param: 'org_id' });
  }
}

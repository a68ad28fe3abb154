import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { listEnvelope, mapPage, type ListEnvelope } from '@sbc/pagination';
import type { CallerKey } from '@sbc/proto/sbc/account/v1/account_pb';

function iso(value: Timestamp | undefined): string | undefined {
  return value ? timestampDate(value).toISOString() : undefined;
}

/** The spec's CallerKey resource. Optional fields are omitted when unset; caps are in whole credits. */
export function renderCallerKey(key: CallerKey): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: key.id,
    object: 'caller_key',
    user_id: key.userId,
    name: key.name,
    mask: key.mask,
    created_at: iso(key.createdAt),
    last_used_at: iso(key.lastUsedAt),
    revoked_at: iso(key.revokedAt),
    daily_limit_tokens: key.dailyLimitCredits === undefined ? undefined : Number(key.dailyLimitCredits),
    monthly_limit_tokens: key.monthlyLimitCredits === undefined ? undefined : Number(key.monthlyLimitCredits),
    allowed_models: key.allowedModels?.values,
    allowed_tools: key.allowedTools?.values,
    route: key.route,
    mode: key.mode,
    incognito: key.incognito,
    cache_ttl_s: key.cacheTtlS,
    cache_tools: key.cacheTools,
    guardrails: key.guardrailIds,
    device_id: key.deviceId,
    org_id: key.orgId,
    scopes: key.scopes,
    rpm: key.rpm === undefined ? undefined : Number(key.rpm),
    tpm: key.tpm === undefined ? undefined : Number(key.tpm),
  };
  if (key.dailyLimitCredits !== undefined || key.monthlyLimitCredits !== undefined) view.caps_unit = 'credit';
  return Object.fromEntries(Object.entries(view).filter(([, value]) => value !== undefined));
}

/** A page of keys in the list envelope (CONTRACTS "Lists"); the account service read it newest first. */
export function renderKeyPage(keys: CallerKey[], hasMore: boolean): ListEnvelope<Record<string, unknown>> {
  return mapPage(
    listEnvelope(keys, hasMore, (key) => key.id),
    renderCallerKey,
  );
}

import type { Scope } from '@sbc/scopes';
import type { CreateKeyBody, UpdateKeyBody } from '../../api/types';

/** What the mint and edit forms hold, as typed: strings until submitted. */
export interface KeyFormState {
  name: string;
  preset: 'gateway' | 'read_only' | 'full_access' | 'custom';
  scopes: Scope[];
  allowedModels: string;
  /** Globs over `<server>__<tool>`, split as allowedModels is; blank for every MCP tool. */
  allowedTools: string;
  daily: string;
  monthly: string;
  /** The key's own requests and tokens per minute; blank for the service's. */
  rpm: string;
  tpm: string;
  route: 'auto' | 'byo' | 'credits';
  mode: 'model' | 'agent';
  /** Response cache TTL in seconds; blank or 0 = off. */
  cacheTtl: string;
  cacheTools: boolean;
}

export const EMPTY_KEY_FORM: KeyFormState = {
  name: '',
  preset: 'gateway',
  scopes: [],
  allowedModels: '',
  allowedTools: '',
  daily: '',
  monthly: '',
  rpm: '',
  tpm: '',
  route: 'auto',
  mode: 'model',
  cacheTtl: '',
  cacheTools: false,
};

/** `a, b\nc` → ['a', 'b', 'c']; blank → undefined (every model, or every tool). */
export function modelList(text: string): string[] | undefined {
  const models = text
    .split(/[\s,]+/)
    .map((model) => model.trim())
    .filter(Boolean);
  return models.length > 0 ? models : undefined;
}

function cap(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

export function createBody(form: KeyFormState): CreateKeyBody {
  return {
    name: form.name.trim(),
    ...(form.preset === 'custom' ? { scopes: form.scopes } : { preset: form.preset }),
    allowed_models: modelList(form.allowedModels),
    allowed_tools: modelList(form.allowedTools),
    daily_limit_tokens: cap(form.daily),
    monthly_limit_tokens: cap(form.monthly),
    rpm: cap(form.rpm),
    tpm: cap(form.tpm),
    route: form.route,
    mode: form.mode,
    cache_ttl_s: cap(form.cacheTtl) ?? 0,
    cache_tools: form.cacheTools,
  };
}

/** An edit sends every field, so a cleared cap or allow-list is removed (null), not kept. */
export function updateBody(form: KeyFormState): UpdateKeyBody {
  return {
    name: form.name.trim(),
    ...(form.preset === 'custom' ? { scopes: form.scopes } : { preset: form.preset }),
    allowed_models: modelList(form.allowedModels) ?? null,
    allowed_tools: modelList(form.allowedTools) ?? null,
    daily_limit_tokens: cap(form.daily) ?? null,
    monthly_limit_tokens: cap(form.monthly) ?? null,
    rpm: cap(form.rpm) ?? null,
    tpm: cap(form.tpm) ?? null,
    route: form.route,
    mode: form.mode,
    cache_ttl_s: cap(form.cacheTtl) ?? 0,
    cache_tools: form.cacheTools,
  };
}

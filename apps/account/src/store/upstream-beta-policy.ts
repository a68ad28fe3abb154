import { betaPolicyIssues, isEmptyBetaPolicy, type AnthropicBetaPolicy } from '@sbc/api';
import type { Issue } from '@sbc/errors';
import { Prisma } from '../generated/prisma/client';

/** An endpoint's `anthropic_beta` policy as stored: both parts always present (empty when unused). */
export interface StoredBetaPolicy {
  drop: string[];
  map: Record<string, string>;
}

/** What is wrong with a policy about to be saved, under `anthropic_beta.<part>`. */
export function betaPolicyIssuesOf(policy: AnthropicBetaPolicy | null | undefined): Issue[] {
  if (!policy) return [];
  return betaPolicyIssues(policy).map((issue) => {
    const path = ['anthropic_beta', ...issue.path].join('.');
    return { path, code: 'invalid_value', message: `${path} ${issue.message}` };
  });
}

/** The column's value: NULL for no policy (an empty one included), else both parts. */
export function betaPolicyColumn(policy: AnthropicBetaPolicy | null): Prisma.InputJsonObject | typeof Prisma.DbNull {
  if (isEmptyBetaPolicy(policy ?? undefined)) return Prisma.DbNull;
  return { drop: [...(policy!.drop ?? [])], map: { ...policy!.map } };
}

/** The stored policy, or null when the endpoint has none (or the column holds something else). */
export function betaPolicyOf(value: Prisma.JsonValue | null): StoredBetaPolicy | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const drop = Array.isArray(value.drop) ? value.drop.filter((item): item is string => typeof item === 'string') : [];
  const map: Record<string, string> = {};
  if (value.map && typeof value.map === 'object' && !Array.isArray(value.map))
    for (const [from, to] of Object.entries(value.map)) if (typeof to === 'string') map[from] = to;
  return drop.length === 0 && Object.keys(map).length === 0 ? null : { drop, map };
}

/**
 * The policy as an audit record keeps it: `map` as `[from, to]` pairs, since a record's object keys are rewritten
 * to snake_case and a beta value is not a field name.
 */
export function auditableBetaPolicy(policy: StoredBetaPolicy | null) {
  return policy && { drop: policy.drop, map: Object.entries(policy.map) };
}

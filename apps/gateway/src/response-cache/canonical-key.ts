import { createHash } from 'node:crypto';
import type { Dialect } from '@sbc/dialects';

/**
 * Top-level body fields that never change a reply's content: how it is delivered (`stream`, its options) and
 * who asked (`user`, `metadata`). Two bodies that differ only in these share an entry (CONTRACTS "Response cache").
 */
const IGNORED_FIELDS = new Set(['stream', 'stream_options', 'user', 'metadata']);

/** `value` as JSON with every object's keys sorted and no whitespace, so field order and spacing never matter. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields: string[] = [];
    for (const name of Object.keys(value).sort()) {
      const field = (value as Record<string, unknown>)[name];
      // As JSON.stringify does: a field holding undefined is absent.
      if (field !== undefined) fields.push(`${JSON.stringify(name)}:${canonicalJson(field)}`);
    }
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Who an entry is shared with: the account, or for a team key the team (never anyone else). */
export type CacheScope = { kind: 'account'; id: string } | { kind: 'team'; id: string };

export interface CacheKeyInput {
  scope: CacheScope;
  dialect: Dialect;
  /** The models the call's targets would send upstream (`<target>=<model>`), in any order. */
  targetModels: readonly string[];
  body: Readonly<Record<string, unknown>>;
}

/**
 * The entry's key: the scope in clear (so an operator can find and drop an account's entries), then a SHA-256 of
 * the dialect, the target models and the body in canonical form without the ignored fields.
 */
export function cacheKeyOf(input: CacheKeyInput): string {
  const request: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input.body)) if (!IGNORED_FIELDS.has(name)) request[name] = value;
  const targets = [...new Set(input.targetModels)].sort();
  const digest = createHash('sha256')
    .update(canonicalJson({ dialect: input.dialect, targets, request }))
    .digest('base64url');
  return `${input.scope.kind}:${input.scope.id}:${digest}`;
}

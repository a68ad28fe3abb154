/** The spec's Scope enumeration, presets, the legacy set and the team-key cap (CONTRACTS "Identity"). */

export const SCOPES = [
  'gateway:invoke',
  'usage:read',
  'billing:read',
  'keys:read',
  'keys:write',
  'endpoints:read',
  'endpoints:write',
  'teams:read',
  'teams:write',
  'devices:read',
  'devices:write',
  'builds:read',
  'builds:write',
  'builds:admin',
  'runs:read',
  'runs:write',
  'audit:read',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export const PRESETS = {
  gateway: ['gateway:invoke'],
  read_only: SCOPES.filter((scope) => scope.endsWith(':read')),
  full_access: [...SCOPES],
} as const satisfies Record<string, readonly Scope[]>;

export type Preset = keyof typeof PRESETS;

/** Keys minted before scopes were stored act with exactly this set. */
export const LEGACY_SCOPES: readonly Scope[] = [
  'gateway:invoke',
  'usage:read',
  'billing:read',
  'keys:read',
  'endpoints:read',
];

/** Scopes a team key never holds, whatever is stored on it. */
export const TEAM_KEY_EXCLUDED: readonly Scope[] = ['keys:write', 'teams:write', 'devices:write', 'builds:admin'];

/** Scopes only the service's operators hold (CONTRACTS "Operators"), whatever a key stores. */
export const OPERATOR_SCOPES: readonly Scope[] = ['builds:admin'];

/** Every scope but the operators' own: what a non-operator's Full access key holds. */
export function presetScopes(preset: Preset, options: { operator: boolean }): Scope[] {
  return PRESETS[preset].filter((scope: Scope) => options.operator || !OPERATOR_SCOPES.includes(scope));
}

/**
 * The scopes a key acts with: its stored list (or the legacy set when it has none), with team keys capped and
 * the operator scopes dropped unless the key's owner is an operator. Returned in the enumeration's order,
 * without duplicates or unknown strings.
 */
export function effectiveScopes(
  stored: readonly string[] | null | undefined,
  options: { teamKey: boolean; operator: boolean },
): Scope[] {
  const base = new Set<string>(stored ?? LEGACY_SCOPES);
  return SCOPES.filter(
    (scope) =>
      base.has(scope) &&
      !(options.teamKey && TEAM_KEY_EXCLUDED.includes(scope)) &&
      (options.operator || !OPERATOR_SCOPES.includes(scope)),
  );
}

/** The scopes among `required` that `held` lacks; empty means allowed. */
export function missingScopes(held: readonly Scope[], required: readonly Scope[]): Scope[] {
  return required.filter((scope) => !held.includes(scope));
}

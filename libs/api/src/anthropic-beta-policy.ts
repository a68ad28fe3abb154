/**
 * The `anthropic_beta` policy of an endpoint or engine (CONTRACTS "Agents, tools and policies"): how the caller's
 * `anthropic-beta` values reach a target that speaks Anthropic's dialect. The rules a policy must keep, checked
 * wherever one is written (the API, the account service, the edge's engine settings); libs/dialects applies it.
 */

/** RFC 9110 token characters (a comma cannot be one): what a single beta value may hold. */
const BETA_VALUE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The longest beta value a policy may name (real ones are about 30 characters). */
export const MAX_BETA_VALUE_LENGTH = 128;
/** The most values a policy's `drop` may list, and the most entries its `map` may hold. */
export const MAX_BETA_RULES = 64;
/** In `drop`: every value the `map` does not name (libs/dialects anthropic-beta.ts reads it the same way). */
export const DROP_ALL_BETAS = '*';

/**
 * How an endpoint wants the caller's beta values: each value `map` names is sent as its mapped value; of the
 * rest, those `drop` lists (or all of them, with `*`) are not sent; everything else goes as the caller sent it.
 */
export interface AnthropicBetaPolicy {
  drop?: readonly string[];
  map?: Readonly<Record<string, string>>;
}

export interface BetaPolicyIssue {
  /** Under the policy: `['drop', 2]`, `['map', 'some-beta']`, `['drop']`. */
  path: Array<string | number>;
  message: string;
}

function valueProblem(value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_BETA_VALUE_LENGTH)
    return `must be 1-${MAX_BETA_VALUE_LENGTH} characters`;
  if (!BETA_VALUE.test(value)) return "must be a header token (letters, digits and !#$%&'*+.^_`|~-, no comma)";
  return undefined;
}

/** What is wrong with a policy, each issue under its path; empty when it may be saved. */
export function betaPolicyIssues(policy: AnthropicBetaPolicy): BetaPolicyIssue[] {
  const issues: BetaPolicyIssue[] = [];
  const drop = policy.drop ?? [];
  const map = Object.entries(policy.map ?? {});
  if (drop.length > MAX_BETA_RULES)
    issues.push({ path: ['drop'], message: `must list at most ${MAX_BETA_RULES} values` });
  if (map.length > MAX_BETA_RULES)
    issues.push({ path: ['map'], message: `must hold at most ${MAX_BETA_RULES} entries` });
  drop.forEach((value, index) => {
    const problem = value === DROP_ALL_BETAS ? undefined : valueProblem(value);
    if (problem) issues.push({ path: ['drop', index], message: problem });
    else if (policy.map && Object.hasOwn(policy.map, value))
      issues.push({ path: ['drop', index], message: 'is mapped too: name a value in drop or in map, not both' });
  });
  for (const [from, to] of map) {
    const problem = valueProblem(from) ?? valueProblem(to);
    if (problem) issues.push({ path: ['map', from.slice(0, MAX_BETA_VALUE_LENGTH)], message: problem });
  }
  return issues;
}

/** A policy that changes nothing (no `drop`, no `map`): stored as none, every value sent as the caller sent it. */
export function isEmptyBetaPolicy(policy: AnthropicBetaPolicy | undefined): boolean {
  return !policy || ((policy.drop?.length ?? 0) === 0 && Object.keys(policy.map ?? {}).length === 0);
}

/**
 * The `anthropic-beta` header (dialects.md §4, §9): a comma-separated list of feature flags a Messages caller
 * asks for. First-party Anthropic takes every flag it knows; endpoints that front Claude elsewhere (Bedrock,
 * Vertex) refuse the ones they do not with a 400, so what reaches a target is shaped by its endpoint's policy
 * and by what the target was seen to refuse. Pure functions; the edge decides when they run.
 */

/** RFC 9110 token characters (a comma cannot be one): what a single beta value may hold. */
const BETA_VALUE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The longest beta value a policy may name (real ones are about 30 characters). */
export const MAX_BETA_VALUE_LENGTH = 128;
/** The most values a policy's `drop` may list, and the most entries its `map` may hold. */
export const MAX_BETA_RULES = 64;
/** In `drop`: every value the `map` does not name. */
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
  /** Dotted, under the policy: `drop.2`, `map.foo`. */
  path: string;
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
    issues.push({ path: 'drop', message: `must list at most ${MAX_BETA_RULES} values` });
  if (map.length > MAX_BETA_RULES) issues.push({ path: 'map', message: `must hold at most ${MAX_BETA_RULES} entries` });
  drop.forEach((value, index) => {
    const problem = value === DROP_ALL_BETAS ? undefined : valueProblem(value);
    if (problem) issues.push({ path: `drop.${index}`, message: problem });
    else if (policy.map && Object.hasOwn(policy.map, value))
      issues.push({ path: `drop.${index}`, message: 'is mapped too: name a value in drop or in map, not both' });
  });
  for (const [from, to] of map) {
    const problem = valueProblem(from) ?? valueProblem(to);
    if (problem) issues.push({ path: `map.${from.slice(0, MAX_BETA_VALUE_LENGTH)}`, message: problem });
  }
  return issues;
}

/** The policy as stored and shown: absent lists empty, `map` as given. Empty means "send as the caller sent". */
export function isEmptyBetaPolicy(policy: AnthropicBetaPolicy | undefined): boolean {
  return !policy || ((policy.drop?.length ?? 0) === 0 && Object.keys(policy.map ?? {}).length === 0);
}

/** The values of an `anthropic-beta` header, in order, trimmed, without empty ones or repeats. */
export function parseBetaHeader(header: string): string[] {
  const values: string[] = [];
  for (const part of header.split(',')) {
    const value = part.trim();
    if (value !== '' && !values.includes(value)) values.push(value);
  }
  return values;
}

/**
 * The values a target is sent: the policy applied to the caller's, then any value the target is known to refuse
 * left out. Order is kept and a value is sent once even when two map to it.
 */
export function shapeBetas(
  values: readonly string[],
  policy: AnthropicBetaPolicy | undefined,
  refused?: (value: string) => boolean,
): string[] {
  const out: string[] = [];
  const dropAll = policy?.drop?.includes(DROP_ALL_BETAS) ?? false;
  for (const value of values) {
    const mapped = policy?.map && Object.hasOwn(policy.map, value) ? policy.map[value]! : undefined;
    if (mapped === undefined && (dropAll || policy?.drop?.includes(value))) continue;
    const sent = mapped ?? value;
    if (refused?.(sent) || out.includes(sent)) continue;
    out.push(sent);
  }
  return out;
}

/** Words that make a 400 mentioning a beta a refusal of it, not a complaint about something else. */
const REFUSAL_WORDS = /unexpected value|not supported|unsupported|invalid|unknown|not (?:allowed|available|enabled)/i;
/** A refusal that names no value: Bedrock answers `invalid beta flag` whichever flag it refused. */
const UNNAMED_REFUSAL = /\b(?:invalid|unsupported|unknown) beta\b/i;

/**
 * The beta values an upstream's 400 message refuses, of those it was sent: the ones it names (Anthropic's and
 * Vertex's "Unexpected value(s) `…` for the `anthropic-beta` header"), or every one sent when it refuses a beta
 * without naming it. Empty when the message is not a beta refusal.
 */
export function refusedBetas(message: string, sent: readonly string[]): string[] {
  if (sent.length === 0 || !/beta/i.test(message) || !REFUSAL_WORDS.test(message)) return [];
  const named = sent.filter((value) => namesValue(message, value));
  if (named.length > 0) return named;
  return UNNAMED_REFUSAL.test(message) ? [...sent] : [];
}

/** Characters that would make a value found in prose part of a longer word (quotes and periods do not). */
const WORD_CHAR = /[0-9A-Za-z_-]/;

/** `value` appears in `message` as a whole word (not as part of a longer one). */
function namesValue(message: string, value: string): boolean {
  for (let at = message.indexOf(value); at !== -1; at = message.indexOf(value, at + 1)) {
    const before = message[at - 1];
    const after = message[at + value.length];
    if ((before === undefined || !WORD_CHAR.test(before)) && (after === undefined || !WORD_CHAR.test(after)))
      return true;
  }
  return false;
}

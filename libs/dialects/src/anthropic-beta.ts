/**
 * The `anthropic-beta` header (dialects.md §4, §9): a comma-separated list of feature flags a Messages caller
 * asks for. First-party Anthropic takes every flag it knows; endpoints that front Claude elsewhere (Bedrock,
 * Vertex) refuse the ones they do not with a 400, so what reaches a target is shaped by its endpoint's policy
 * and by what the target was seen to refuse. Pure functions; the edge decides when they run.
 */

/**
 * An endpoint's policy (validated where it is written: libs/api anthropic-beta-policy.ts). Each value `map` names
 * is sent as its mapped value; of the rest, those `drop` lists (or all of them, with `*`) are not sent; everything
 * else goes as the caller sent it.
 */
export interface AnthropicBetaPolicy {
  drop?: readonly string[];
  map?: Readonly<Record<string, string>>;
}

/** In a policy's `drop`: every value its `map` does not name. */
const DROP_ALL = '*';

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
  const dropAll = policy?.drop?.includes(DROP_ALL) ?? false;
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

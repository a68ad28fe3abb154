import type { Span } from './span';

// Secrets recognised in text: what the edge keeps or exports (prompt and reply content on GenAI spans, the upstream
// bodies of a playground capture) is redacted with them, and the `secret` detector of a guardrail finds them.

export const REDACTED = '[redacted]';

/** Names whose assigned value is a secret (`api_key=…`, `"password": "…"`). */
const ASSIGNED_SECRETS = 'api[_-]?key|x-api-key|secret|password|passwd|token|access[_-]?token|client[_-]?secret';

/**
 * A secret's pattern, what it is replaced with, and whether a text, lower-cased, may hold a match: it must hold
 * a literal every match holds. Lower-casing maps each ASCII letter to its lower case whatever surrounds it, and
 * the patterns match ASCII letters only (`/i` without `u` folds no other letter onto one), so a text with a match
 * holds the match's literals lower-cased.
 */
export interface SecretPattern {
  pattern: RegExp;
  replacement: string;
  mayMatch: (lower: string) => boolean;
}

/**
 * Holds one of `literals`, which all hold `rare`: a character few texts hold, which a search finds (or not) at
 * once, where one for a literal starting with a common letter stops at each of them.
 */
const anyOf =
  (rare: string, ...literals: string[]) =>
  (lower: string) =>
    lower.includes(rare) && literals.some((literal) => lower.includes(literal));

/** Assignments (`:`, `=`) and the names of assigned secrets, in whole or in part (`api` for `x-api-key`). */
const assigns = (lower: string) => lower.includes(':') || lower.includes('=');
const namesSecret = anyOf('', 'api', 'secret', 'passw', 'token');

/**
 * Secrets a text may carry: this service's own credentials (`sbc_` keys, `sbs_` sessions, `sbd_` device tokens,
 * `whsec_` webhook secrets), vendors' API keys (OpenAI and Anthropic `sk-…`, AWS, Google, GitHub, Slack), bearer
 * tokens and JWTs, PEM private keys, and the value of any `api_key=…` / `"password": …` style assignment.
 *
 * A pattern runs only over a text that may hold a match (`mayMatch`): most texts hold none of the literals most
 * patterns need, and a substring search costs a fraction of a pass of the pattern (a case-insensitive one above all).
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
    replacement: REDACTED,
    mayMatch: anyOf('-', '-----begin '),
  },
  {
    pattern: /\b(?:sbc|sbs|sbd)_[A-Za-z0-9_-]{8,}/g,
    replacement: REDACTED,
    mayMatch: anyOf('_', 'sbc_', 'sbs_', 'sbd_'),
  },
  { pattern: /\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, replacement: REDACTED, mayMatch: anyOf('_', 'whsec_') },
  { pattern: /\bsk-[A-Za-z0-9_-]{8,}/g, replacement: REDACTED, mayMatch: anyOf('-', 'sk-') },
  { pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replacement: REDACTED, mayMatch: anyOf('', 'akia', 'asia') },
  { pattern: /\bAIza[0-9A-Za-z_-]{30,}/g, replacement: REDACTED, mayMatch: anyOf('z', 'aiza') },
  {
    pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
    replacement: REDACTED,
    mayMatch: anyOf('_', 'ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'),
  },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replacement: REDACTED, mayMatch: anyOf('x', 'xox') },
  {
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
    replacement: REDACTED,
    mayMatch: anyOf('j', 'eyj'),
  },
  {
    pattern: /\b((?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
    replacement: `$1${REDACTED}`,
    mayMatch: anyOf('', 'bearer', 'basic'),
  },
  {
    pattern: new RegExp(`\\b((?:${ASSIGNED_SECRETS})["']?\\s*[:=]\\s*["']?)[^\\s"',;}]{4,}`, 'gi'),
    replacement: `$1${REDACTED}`,
    // Every name holds `api` (api_key, x-api-key), `secret` (client_secret), `passw` or `token`, and a `:` or `=`
    // follows it.
    mayMatch: (lower) => assigns(lower) && namesSecret(lower),
  },
];

/**
 * `text` with every secret it recognisably holds replaced by `[redacted]`, and each of `known` (say an engine's
 * own credential and header values, whatever their shape) too.
 */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  let redacted = text;
  // Longest first, so a secret that contains another is replaced whole; a value too short to be a secret is
  // left alone (it would blank ordinary words).
  for (const secret of [...known].filter((one) => one.length >= 8).sort((a, b) => b.length - a.length))
    redacted = redacted.split(secret).join(REDACTED);
  // A replacement puts `[redacted]` where a match was: it brings no literal a pattern needs into the text.
  const lower = text.toLowerCase();
  for (const { pattern, replacement, mayMatch } of SECRET_PATTERNS)
    if (mayMatch(lower)) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/**
 * Where the secrets of `text` are, as the patterns above find them (a `Bearer ` prefix or an `api_key=` name is
 * not part of the secret); spans may overlap. `lower` is the text lower-cased, when the caller has it.
 */
export function findSecrets(text: string, lower = text.toLowerCase()): Span[] {
  const spans: Span[] = [];
  for (const { pattern, mayMatch } of SECRET_PATTERNS) {
    if (!mayMatch(lower)) continue;
    pattern.lastIndex = 0;
    // No pattern matches the empty text, so each match moves `lastIndex` on.
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      const kept = match[1]?.length ?? 0;
      spans.push({ start: match.index + kept, end: match.index + match[0].length });
    }
  }
  return spans;
}

import type { Span } from './span';

// Secrets recognised in text: what the edge keeps or exports (prompt and reply content on GenAI spans, the upstream
// bodies of a playground capture) is redacted with them, and the `secret` detector of a guardrail finds them.

export const REDACTED = '[redacted]';

/** Names whose assigned value is a secret (`api_key=…`, `"password": "…"`). */
const ASSIGNED_SECRETS = 'api[_-]?key|x-api-key|secret|password|passwd|token|access[_-]?token|client[_-]?secret';

/**
 * Secrets a text may carry: this service's own credentials (`sbc_` keys, `sbs_` sessions, `sbd_` device tokens,
 * `whsec_` webhook secrets), vendors' API keys (OpenAI and Anthropic `sk-…`, AWS, Google, GitHub, Slack), bearer
 * tokens and JWTs, PEM private keys, and the value of any `api_key=…` / `"password": …` style assignment.
 */
const SECRET_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b(?:sbc|sbs|sbd)_[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, REDACTED],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b((?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1${REDACTED}`],
  [new RegExp(`\\b((?:${ASSIGNED_SECRETS})["']?\\s*[:=]\\s*["']?)[^\\s"',;}]{4,}`, 'gi'), `$1${REDACTED}`],
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
  for (const [pattern, replacement] of SECRET_PATTERNS) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/**
 * Where the secrets of `text` are, as the patterns above find them (a `Bearer ` prefix or an `api_key=` name is
 * not part of the secret); spans may overlap.
 */
export function findSecrets(text: string): Span[] {
  const spans: Span[] = [];
  for (const [pattern] of SECRET_PATTERNS) {
    pattern.lastIndex = 0;
    for (const match of text.matchAll(pattern)) {
      const kept = match[1]?.length ?? 0;
      spans.push({ start: match.index + kept, end: match.index + match[0].length });
    }
  }
  return spans;
}

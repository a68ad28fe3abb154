// What a capture may keep of an upstream exchange: no credential in a header, no secret-looking string in a
// body, no query string in a URL (where some vendors take their key), and a bounded size.

/** Headers shown with their value; every other header is named with its value withheld. */
const SHOWN_HEADERS = new Set([
  'accept',
  'anthropic-beta',
  'anthropic-version',
  'cache-control',
  'content-encoding',
  'content-length',
  'content-type',
  'date',
  'openai-processing-ms',
  'request-id',
  'retry-after',
  'transfer-encoding',
  'x-request-id',
  'x-sbc-hop',
]);
const SHOWN_PATTERN = /ratelimit/;

export const WITHHELD = '[redacted]';

/**
 * A header set as a capture shows it: the harmless ones with their values, the rest (Authorization, x-api-key,
 * an endpoint's own headers, cookies) by name only, so a person sees that they were sent but never what.
 */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    shown[lower] =
      SHOWN_HEADERS.has(lower) || SHOWN_PATTERN.test(lower)
        ? Array.isArray(value)
          ? value.join(', ')
          : value
        : WITHHELD;
  }
  return shown;
}

// Strings shaped like credentials: vendor API keys, this service's own keys, sessions, device tokens and webhook
// secrets, bearer tokens, and the common cloud and forge token forms.
const SECRET_PATTERNS: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b(?:sbc|sbs|sbd)_[A-Za-z0-9_-]{16,}/g,
  /\bwhsec_[A-Za-z0-9+/=_-]{16,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/gi,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g,
];

/**
 * `text` with every secret-looking string withheld, and each of `known` (the engine's own credential and
 * header values, whatever their shape) too.
 */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  // Longest first, so a secret that contains another is withheld whole.
  for (const secret of [...known].filter((one) => one.length >= 8).sort((a, b) => b.length - a.length))
    out = out.split(secret).join(WITHHELD);
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, WITHHELD);
  return out;
}

/** An upstream URL as a capture shows it: origin and path, without user info or query. */
export function shownUrl(origin: string, path: string): string {
  const url = new URL(path, origin);
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** Collects a body up to `limitBytes`; what passes the limit is counted, not kept. */
export class CappedText {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Bytes seen past the limit. */
  dropped = 0;

  constructor(private readonly limitBytes: number) {}

  add(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const room = this.limitBytes - this.kept;
    if (room <= 0) {
      this.dropped += bytes.length;
      return;
    }
    const part = bytes.length > room ? bytes.subarray(0, room) : bytes;
    this.chunks.push(part);
    this.kept += part.length;
    this.dropped += bytes.length - part.length;
  }

  /** The kept bytes as text (a character cut at the limit shows as U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

import { REDACTED } from '@sbc/guardrails';

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

/** What a capture shows in place of a header value or a secret. */
export const WITHHELD = REDACTED;

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

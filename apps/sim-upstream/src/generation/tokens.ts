/**
 * The simulator's notion of a token: deterministic and cheap, not a real tokenizer. Input is estimated at
 * about four characters per token over all text a request carries; output is counted in emitted pieces.
 */

const CHARS_PER_TOKEN = 4;

/** Keys whose string values are identifiers, markers or binary payloads rather than prompt text. */
const NON_TEXT_KEYS = new Set([
  'type',
  'role',
  'id',
  'call_id',
  'tool_call_id',
  'tool_use_id',
  'cache_control',
  'signature',
  'data',
  'file_data',
  'file_id',
  'url',
  'image_url',
  'media_type',
  'detail',
  'status',
]);

/** Total characters of prompt text inside any JSON value (strings under identifier/binary keys skipped). */
export function countTextChars(value: unknown, key?: string): number {
  if (key !== undefined && NON_TEXT_KEYS.has(key)) return 0;
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countTextChars(item), 0);
  if (value !== null && typeof value === 'object') {
    let sum = 0;
    for (const [childKey, child] of Object.entries(value)) sum += countTextChars(child, childKey);
    return sum;
  }
  return 0;
}

/** Input-token estimate over the given request fields (messages, system, tools…); at least 1. */
export function estimateInputTokens(...values: unknown[]): number {
  const chars = values.reduce((sum: number, value) => sum + countTextChars(value), 0);
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}

/** Splits text into word pieces that keep their leading whitespace, so joining them restores the text. */
export function splitIntoPieces(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

/** Splits a JSON string into fixed-size slices, the way argument deltas arrive from real vendors. */
export function chunkText(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
  return chunks;
}

import { randomBytes } from 'node:crypto';

/** Ids in each dialect's style, and tool-call id hygiene. */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! % ALPHABET.length];
  return out;
}

/** A fresh id with `prefix` (`chatcmpl-`, `resp_`, `msg_`, `fc_`, `call_`, `toolu_`, `rs_`). */
export function dialectId(prefix: string): string {
  return `${prefix}${randomToken(24)}`;
}

/**
 * Anthropic requires `^[a-zA-Z0-9_-]+$` for tool-use ids. Every other character becomes `_`, so the same
 * foreign id always maps to the same safe id and the matching tool result can be rewritten identically.
 */
export function sanitizeToolId(id: string): string {
  const safe = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return safe === '' ? '_' : safe;
}

/** Tool names: OpenAI allows `[a-zA-Z0-9_-]{1,64}`, Anthropic 128; longer names are cut for OpenAI upstreams. */
export const OPENAI_TOOL_NAME_MAX = 64;

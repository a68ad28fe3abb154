import { randomBytes } from 'node:crypto';

/** Ids in each dialect's style, and tool-call id hygiene. */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// Drawn from the CSPRNG a pool at a time: replies mint several ids each, and one syscall per id shows up
// in the edge's CPU profile.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function randomToken(length: number): string {
  if (poolOffset + length > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[pool[poolOffset + i]! % ALPHABET.length];
  poolOffset += length;
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

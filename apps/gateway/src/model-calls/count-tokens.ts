import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { parseMessagesRequest, type ChatRequest, type Message } from '@sbc/dialects';

// Per-turn framing and per-image costs are what providers document as typical; exact counts come from the
// upstream when it can count (see the count_tokens route).
const TOKENS_PER_TURN = 3;
const TOKENS_PER_IMAGE = 1_600;
const TOKENS_PER_DOCUMENT_PAGE_ESTIMATE = 1_500;

/**
 * The tokenizer's merge step is quadratic in the length of a run without whitespace (64,000 identical
 * characters take seconds, and would stall the edge for every caller), so longer runs go to it in pieces of
 * this size; at most one token per cut is miscounted, and only in such runs.
 */
const MAX_RUN = 256;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN + 1},}`, 'g');
/**
 * Characters counted exactly per request (about 10 ms of prose, 50 ms of worst-case runs); past it the rest
 * is estimated at the rate measured so far, so a huge body costs the edge milliseconds, not seconds.
 */
export const EXACT_COUNT_CHARS = 262_144;
/** The rate for text past the budget when nothing was counted before it (typical English and code). */
const CHARS_PER_TOKEN_FALLBACK = 4;

function countRuns(text: string): number {
  if (text.length <= MAX_RUN) return countTokens(text);
  let total = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    total += countTokens(text.slice(from, run.index));
    for (let at = 0; at < run[0].length; at += MAX_RUN) total += countTokens(run[0].slice(at, at + MAX_RUN));
    from = run.index + run[0].length;
  }
  return total + countTokens(text.slice(from));
}

/** Counts texts with the o200k tokenizer against one budget of exact work (one counter per request). */
export function createTokenCounter(budgetChars = EXACT_COUNT_CHARS) {
  let left = budgetChars;
  let countedChars = 0;
  let countedTokens = 0;
  return (text: string): number => {
    const exact = text.length <= left ? text : text.slice(0, left);
    left -= exact.length;
    const tokens = exact === '' ? 0 : countRuns(exact);
    countedChars += exact.length;
    countedTokens += tokens;
    const rest = text.length - exact.length;
    if (rest === 0) return tokens;
    const rate = countedChars > 0 ? countedTokens / countedChars : 1 / CHARS_PER_TOKEN_FALLBACK;
    return tokens + Math.ceil(rest * rate);
  };
}

function countMessage(message: Message, count: (text: string) => number): number {
  let total = TOKENS_PER_TURN;
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
      case 'refusal':
        total += count(block.text);
        break;
      case 'reasoning':
        total += count(block.text);
        break;
      case 'image':
        total += TOKENS_PER_IMAGE;
        break;
      case 'document':
        total += TOKENS_PER_DOCUMENT_PAGE_ESTIMATE;
        break;
      case 'tool_call':
        total += count(block.name) + count(block.arguments);
        break;
      case 'tool_result':
        for (const part of block.content)
          total +=
            part.type === 'text'
              ? count(part.text)
              : part.type === 'image'
                ? TOKENS_PER_IMAGE
                : TOKENS_PER_DOCUMENT_PAGE_ESTIMATE;
        break;
    }
  }
  return total;
}

/**
 * Input tokens of a neutral request by the o200k tokenizer: turns, tool definitions and framing. `count`
 * carries the request's budget of exact work when other text of the same call is counted too.
 */
export function countRequestTokens(request: ChatRequest, count = createTokenCounter()): number {
  let total = 0;
  for (const message of request.messages) total += countMessage(message, count);
  for (const tool of request.tools ?? []) {
    total += count(tool.name) + count(tool.description ?? '') + count(JSON.stringify(tool.parameters ?? {}));
  }
  return total + TOKENS_PER_TURN;
}

/** A `count_tokens` body (Messages shape, without `max_tokens`) counted locally. */
export function countMessagesBody(body: Record<string, unknown>): number {
  return countRequestTokens(parseMessagesRequest({ ...body, max_tokens: 1 }));
}

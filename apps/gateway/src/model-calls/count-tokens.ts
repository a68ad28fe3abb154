import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { parseMessagesRequest, type ChatRequest, type Message } from '@sbc/dialects';

// Per-turn framing and per-image costs are what providers document as typical; exact counts come from the
// upstream when it can count (see the count_tokens route).
const TOKENS_PER_TURN = 3;
const TOKENS_PER_IMAGE = 1_600;
const TOKENS_PER_DOCUMENT_PAGE_ESTIMATE = 1_500;

function countMessage(message: Message): number {
  let total = TOKENS_PER_TURN;
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
      case 'refusal':
        total += countTokens(block.text);
        break;
      case 'reasoning':
        total += countTokens(block.text);
        break;
      case 'image':
        total += TOKENS_PER_IMAGE;
        break;
      case 'document':
        total += TOKENS_PER_DOCUMENT_PAGE_ESTIMATE;
        break;
      case 'tool_call':
        total += countTokens(block.name) + countTokens(block.arguments);
        break;
      case 'tool_result':
        for (const part of block.content) total += part.type === 'text' ? countTokens(part.text) : part.type === 'image' ? TOKENS_PER_IMAGE : TOKENS_PER_DOCUMENT_PAGE_ESTIMATE;
        break;
    }
  }
  return total;
}

/** Input tokens of a neutral request by the o200k tokenizer: turns, tool definitions and framing. */
export function countRequestTokens(request: ChatRequest): number {
  let total = 0;
  for (const message of request.messages) total += countMessage(message);
  for (const tool of request.tools ?? []) {
    total += countTokens(tool.name) + countTokens(tool.description ?? '') + countTokens(JSON.stringify(tool.parameters ?? {}));
  }
  return total + TOKENS_PER_TURN;
}

/** A `count_tokens` body (Messages shape, without `max_tokens`) counted locally. */
export function countMessagesBody(body: Record<string, unknown>): number {
  return countRequestTokens(parseMessagesRequest({ ...body, max_tokens: 1 }));
}

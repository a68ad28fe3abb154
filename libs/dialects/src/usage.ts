import type { Usage } from './ir';
import { isObject, objectOf } from './json';

/**
 * Usage in each dialect's wire shape. The neutral `Usage` counts input the OpenAI way (cache reads and writes
 * included); Anthropic excludes both from `input_tokens`, so conversions add or subtract them exactly once.
 */

export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

/**
 * Later counts replace earlier ones field by field (streams report cumulative usage in pieces). Built field by
 * field so every Usage has one shape: this runs on every call.
 */
export function mergeUsage(base: Usage, update: Partial<Usage>): Usage {
  const merged: Usage = {
    inputTokens: update.inputTokens ?? base.inputTokens,
    outputTokens: update.outputTokens ?? base.outputTokens,
    cacheReadTokens: update.cacheReadTokens ?? base.cacheReadTokens,
    cacheWriteTokens: update.cacheWriteTokens ?? base.cacheWriteTokens,
  };
  const reasoningTokens = update.reasoningTokens ?? base.reasoningTokens;
  if (reasoningTokens !== undefined) merged.reasoningTokens = reasoningTokens;
  return merged;
}

export function chatUsage(usage: Usage) {
  const details: Record<string, number> = { cached_tokens: usage.cacheReadTokens };
  if (usage.cacheWriteTokens > 0) details.cache_write_tokens = usage.cacheWriteTokens;
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: details,
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}

/** Both `_details` objects and `cache_write_tokens` are required in Responses usage (dialects.md §3.3). */
export function responsesUsage(usage: Usage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens, cache_write_tokens: usage.cacheWriteTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** With `output_tokens_details.thinking_tokens` when the upstream said how much of the output was reasoning. */
/**
 * Messages' `usage` for a reply; `serviceTier` is added last, to the same object (a spread copy with one more key
 * would get a hidden class of its own on every call on Node 20).
 */
export function messagesUsage(usage: Usage, serviceTier?: string) {
  const rendered: Record<string, unknown> = {
    input_tokens: Math.max(usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens, 0),
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
    output_tokens: usage.outputTokens,
  };
  if (usage.reasoningTokens) rendered.output_tokens_details = { thinking_tokens: usage.reasoningTokens };
  if (serviceTier !== undefined) rendered.service_tier = serviceTier;
  return rendered;
}

/** Reads chat-completions `usage`; also reads Responses' names, which some compatible servers send. */
export function usageFromChat(raw: unknown): Partial<Usage> {
  if (!isObject(raw)) return {};
  const u = raw;
  const prompt = u.prompt_tokens ?? u.input_tokens;
  const completion = u.completion_tokens ?? u.output_tokens;
  const promptDetails = objectOf(u.prompt_tokens_details ?? u.input_tokens_details);
  const completionDetails = objectOf(u.completion_tokens_details ?? u.output_tokens_details);
  const usage: Partial<Usage> = {};
  if (prompt !== undefined && prompt !== null) usage.inputTokens = count(prompt);
  if (completion !== undefined && completion !== null) usage.outputTokens = count(completion);
  if (promptDetails.cached_tokens != null) usage.cacheReadTokens = count(promptDetails.cached_tokens);
  if (promptDetails.cache_write_tokens != null) usage.cacheWriteTokens = count(promptDetails.cache_write_tokens);
  if (completionDetails.reasoning_tokens != null) {
    usage.reasoningTokens = count(completionDetails.reasoning_tokens);
  }
  return usage;
}

/**
 * Reads Anthropic `usage` (from a Message, `message_start` or a cumulative `message_delta`). Input is only
 * reported when at least one input field is present, so a `message_delta` carrying output alone does not
 * zero the input counted at `message_start`.
 */
export function usageFromMessages(raw: unknown): Partial<Usage> {
  if (!isObject(raw)) return {};
  const u = raw;
  const usage: Partial<Usage> = {};
  const hasInput = u.input_tokens != null || u.cache_read_input_tokens != null || u.cache_creation_input_tokens != null;
  if (hasInput) {
    const cacheRead = count(u.cache_read_input_tokens);
    const cacheWrite = count(u.cache_creation_input_tokens);
    usage.inputTokens = count(u.input_tokens) + cacheRead + cacheWrite;
    usage.cacheReadTokens = cacheRead;
    usage.cacheWriteTokens = cacheWrite;
  }
  if (u.output_tokens != null) usage.outputTokens = count(u.output_tokens);
  const thinking = objectOf(u.output_tokens_details).thinking_tokens;
  if (thinking != null) usage.reasoningTokens = count(thinking);
  return usage;
}

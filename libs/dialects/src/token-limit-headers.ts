/** OpenAI's token-limit headers: the reset as a duration (`12s`), as its API sends it. */
export function openAiTokenLimitHeaders(limit: number, remaining: number, resetMs: number): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(limit),
    'x-ratelimit-remaining-tokens': String(remaining),
    'x-ratelimit-reset-tokens': `${Math.max(1, Math.ceil(resetMs / 1000))}s`,
  };
}

/** Anthropic's token-limit headers: the reset as an RFC 3339 time, as its API sends it. */
export function anthropicTokenLimitHeaders(limit: number, remaining: number, resetMs: number): Record<string, string> {
  return {
    'anthropic-ratelimit-tokens-limit': String(limit),
    'anthropic-ratelimit-tokens-remaining': String(remaining),
    'anthropic-ratelimit-tokens-reset': new Date(Date.now() + Math.max(0, resetMs))
      .toISOString()
      .replace(/\.\d+Z$/, 'Z'),
  };
}

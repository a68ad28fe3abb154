/**
 * `sim-usage:cache_read=<N>,cache_write=<N>,reasoning=<N>` in the last user message (any of the three, in any
 * order): the reply's usage reports that many prompt tokens read from and written to the prompt cache (on top of
 * the prompt's own estimate, as a real cache hit is part of the prompt), and that many reasoning tokens (on top of
 * the reply's pieces, as hidden reasoning is part of the output). The same in a stream and in a whole reply, so
 * tests can check that a gateway bills both alike. Counts are capped at MAX_EXTRA_TOKENS.
 */
export interface ExtraUsage {
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

const MAX_EXTRA_TOKENS = 10_000_000;
const DIRECTIVE = /sim-usage:((?:[a-z_]+=\d+,?)+)/;
const NONE: ExtraUsage = { cacheRead: 0, cacheWrite: 0, reasoning: 0 };

export function extraUsageOf(text: string): ExtraUsage {
  const match = DIRECTIVE.exec(text);
  if (!match) return NONE;
  const extra = { ...NONE };
  for (const part of match[1]!.split(',')) {
    const [name, value] = part.split('=');
    const count = Math.min(Number(value), MAX_EXTRA_TOKENS);
    if (name === 'cache_read') extra.cacheRead = count;
    else if (name === 'cache_write') extra.cacheWrite = count;
    else if (name === 'reasoning') extra.reasoning = count;
  }
  return extra;
}

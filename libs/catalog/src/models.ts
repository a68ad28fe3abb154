import type { CatalogModel, TokenRates } from './types';

/**
 * The model catalog: list prices per 1M tokens as each vendor publishes them, read on the date in
 * `priced_on`. Update a row by re-reading its `price_source`; the pricing tests pin the arithmetic, not these
 * numbers, so a price change is a one-line edit here.
 *
 * Cache writes: Anthropic's row is the 5-minute write (the default TTL); OpenAI publishes its own cache-write
 * rate; Gemini bills no write premium (it charges cache storage per hour instead), so its write rate is the
 * input rate. House models have no separate cache-write rate in the spec, so a write costs what input costs.
 */

function released(isoDate: string): number {
  return Date.UTC(Number(isoDate.slice(0, 4)), Number(isoDate.slice(5, 7)) - 1, Number(isoDate.slice(8, 10))) / 1000;
}

/** OpenAI bills the whole call at 2x input and cache rates and 1.5x output once the prompt passes 272K tokens. */
function openAiLongContext(rates: TokenRates): TokenRates & { above_input_tokens: number } {
  return {
    above_input_tokens: 272_000,
    input: rates.input * 2,
    output: rates.output * 1.5,
    cache_read: rates.cache_read * 2,
    cache_write: rates.cache_write * 2,
  };
}

const ANTHROPIC_PRICING = 'https://platform.claude.com/docs/en/about-claude/pricing';
const OPENAI_PRICING = 'https://developers.openai.com/api/docs/pricing';
const GOOGLE_PRICING = 'https://ai.google.dev/gemini-api/docs/pricing';
const SPEC_PRICING = 'service description (SERVICE.md), Pricing (credits)';

const HOUSE_RATES = { currency: 'credits', input: 200, output: 800, cache_read: 5, cache_write: 200 } as const;

/**
 * Embedding models bill input only: they produce no tokens, and their vendors publish no cached-input rate, so
 * a cache read or write costs what input costs.
 */
function inputOnly(currency: 'usd' | 'credits', input: number) {
  return { currency, input, output: 0, cache_read: input, cache_write: input };
}

/** OpenAI's embedding models take at most 8,192 tokens per input. */
const OPENAI_EMBEDDING_INPUT = 8_192;

export const MODELS: readonly CatalogModel[] = [
  {
    id: 'house',
    vendor: 'house',
    display_name: 'House',
    created: released('2026-09-23'),
    context_window: 1_000_000,
    max_output_tokens: 128_000,
    tier: 'frontier',
    lane: 'house',
    price: { ...HOUSE_RATES },
    price_source: SPEC_PRICING,
    priced_on: '2026-09-23',
  },
  {
    id: 'house-omni',
    vendor: 'house',
    display_name: 'House Omni',
    created: released('2026-09-23'),
    context_window: 1_000_000,
    max_output_tokens: 128_000,
    tier: 'frontier',
    lane: 'house',
    // The spec prices only house and house-fast; omni is the same agent on another engine, so house's rates.
    price: { ...HOUSE_RATES },
    price_source: SPEC_PRICING,
    priced_on: '2026-09-23',
  },
  {
    id: 'house-fast',
    vendor: 'house',
    display_name: 'House Fast',
    created: released('2026-09-23'),
    context_window: 500_000,
    max_output_tokens: 64_000,
    tier: 'fast',
    lane: 'house',
    price: { currency: 'credits', input: 100, output: 400, cache_read: 2.5, cache_write: 100 },
    price_source: SPEC_PRICING,
    priced_on: '2026-09-23',
  },
  {
    id: 'house-embed',
    vendor: 'house',
    display_name: 'House Embed',
    created: released('2026-11-27'),
    context_window: OPENAI_EMBEDDING_INPUT,
    max_output_tokens: 0,
    tier: 'fast',
    lane: 'house',
    // The spec prices no embedding model; the house one is priced as OpenAI's small one ($0.02 per 1M tokens).
    price: inputOnly('credits', 20),
    embedding: { dimensions: 1_536, adjustable_dimensions: true },
    price_source: 'house embedding model, priced as text-embedding-3-small',
    priced_on: '2026-11-27',
  },
  {
    id: 'claude-fable-5-2',
    vendor: 'anthropic',
    display_name: 'Claude Fable 5.2',
    created: released('2026-11-09'),
    context_window: 1_000_000,
    max_output_tokens: 128_000,
    tier: 'frontier',
    lane: 'vendor',
    price: { currency: 'usd', input: 8, output: 40, cache_read: 0.2, cache_write: 10 },
    price_source: ANTHROPIC_PRICING,
    priced_on: '2026-11-10',
  },
  {
    id: 'claude-fable-5-1',
    vendor: 'anthropic',
    display_name: 'Claude Fable 5.1',
    created: released('2026-09-01'),
    context_window: 1_000_000,
    max_output_tokens: 128_000,
    tier: 'frontier',
    lane: 'vendor',
    price: { currency: 'usd', input: 10, output: 50, cache_read: 0.25, cache_write: 12.5 },
    price_source: ANTHROPIC_PRICING,
    priced_on: '2026-09-23',
  },
  {
    id: 'claude-opus-5-5',
    vendor: 'anthropic',
    display_name: 'Claude Opus 5.5',
    created: released('2026-09-22'),
    context_window: 1_000_000,
    max_output_tokens: 128_000,
    tier: 'frontier',
    lane: 'vendor',
    price: { currency: 'usd', input: 4, output: 20, cache_read: 0.2, cache_write: 5 },
    price_source: ANTHROPIC_PRICING,
    priced_on: '2026-09-23',
  },
  {
    id: 'claude-opus-5',
    vendor: 'anthropic',
    display_name: 'Claude Opus 5',
    created: released('2026-07-24'),
    context_window: 1_000_000,
    max_output_tokens: 128_000,
    tier: 'frontier',
    lane: 'vendor',
    price: { currency: 'usd', input: 5, output: 25, cache_read: 0.5, cache_write: 6.25 },
    price_source: ANTHROPIC_PRICING,
    priced_on: '2026-09-23',
  },
  {
    id: 'claude-sonnet-5-5',
    vendor: 'anthropic',
    display_name: 'Claude Sonnet 5.5',
    created: released('2026-09-29'),
    context_window: 1_000_000,
    max_output_tokens: 128_000,
    tier: 'standard',
    lane: 'vendor',
    price: { currency: 'usd', input: 2, output: 10, cache_read: 0.2, cache_write: 2.5 },
    price_source: ANTHROPIC_PRICING,
    priced_on: '2026-10-01',
  },
  {
    id: 'claude-haiku-4-5',
    vendor: 'anthropic',
    display_name: 'Claude Haiku 4.5',
    created: released('2025-10-15'),
    context_window: 200_000,
    max_output_tokens: 64_000,
    tier: 'fast',
    lane: 'vendor',
    price: { currency: 'usd', input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
    price_source: ANTHROPIC_PRICING,
    priced_on: '2026-09-23',
  },
  {
    id: 'gpt-6-astra',
    vendor: 'openai',
    display_name: 'GPT-6 Astra',
    created: released('2026-09-03'),
    context_window: 1_050_000,
    max_output_tokens: 128_000,
    tier: 'frontier',
    lane: 'vendor',
    price: {
      currency: 'usd',
      input: 10,
      output: 50,
      cache_read: 1,
      cache_write: 12.5,
      long_context: openAiLongContext({ input: 10, output: 50, cache_read: 1, cache_write: 12.5 }),
    },
    price_source: OPENAI_PRICING,
    priced_on: '2026-09-05',
  },
  {
    id: 'gpt-6.1-sol',
    vendor: 'openai',
    display_name: 'GPT-6.1 Sol',
    created: released('2026-09-29'),
    context_window: 1_050_000,
    max_output_tokens: 128_000,
    tier: 'standard',
    lane: 'vendor',
    price: {
      currency: 'usd',
      input: 2,
      output: 10,
      cache_read: 0.1,
      cache_write: 2.5,
      long_context: openAiLongContext({ input: 2, output: 10, cache_read: 0.1, cache_write: 2.5 }),
    },
    price_source: OPENAI_PRICING,
    priced_on: '2026-10-01',
  },
  {
    id: 'gpt-6-sol',
    vendor: 'openai',
    display_name: 'GPT-6 Sol',
    created: released('2026-09-22'),
    context_window: 1_050_000,
    max_output_tokens: 128_000,
    tier: 'standard',
    lane: 'vendor',
    price: {
      currency: 'usd',
      input: 2,
      output: 10,
      cache_read: 0.2,
      cache_write: 2.5,
      long_context: openAiLongContext({ input: 2, output: 10, cache_read: 0.2, cache_write: 2.5 }),
    },
    price_source: OPENAI_PRICING,
    priced_on: '2026-09-22',
  },
  {
    id: 'gpt-6-luna',
    vendor: 'openai',
    display_name: 'GPT-6 Luna',
    created: released('2026-09-22'),
    context_window: 1_050_000,
    max_output_tokens: 128_000,
    tier: 'fast',
    lane: 'vendor',
    price: {
      currency: 'usd',
      input: 0.1,
      output: 0.5,
      cache_read: 0.01,
      cache_write: 0.125,
      long_context: openAiLongContext({ input: 0.1, output: 0.5, cache_read: 0.01, cache_write: 0.125 }),
    },
    price_source: OPENAI_PRICING,
    priced_on: '2026-09-22',
  },
  {
    id: 'text-embedding-3-small',
    vendor: 'openai',
    display_name: 'text-embedding-3-small',
    created: released('2024-01-25'),
    context_window: OPENAI_EMBEDDING_INPUT,
    max_output_tokens: 0,
    tier: 'fast',
    lane: 'vendor',
    price: inputOnly('usd', 0.02),
    embedding: { dimensions: 1_536, adjustable_dimensions: true },
    price_source: OPENAI_PRICING,
    priced_on: '2026-11-27',
  },
  {
    id: 'text-embedding-3-large',
    vendor: 'openai',
    display_name: 'text-embedding-3-large',
    created: released('2024-01-25'),
    context_window: OPENAI_EMBEDDING_INPUT,
    max_output_tokens: 0,
    tier: 'standard',
    lane: 'vendor',
    price: inputOnly('usd', 0.13),
    embedding: { dimensions: 3_072, adjustable_dimensions: true },
    price_source: OPENAI_PRICING,
    priced_on: '2026-11-27',
  },
  {
    id: 'text-embedding-ada-002',
    vendor: 'openai',
    display_name: 'text-embedding-ada-002',
    created: released('2022-12-15'),
    context_window: OPENAI_EMBEDDING_INPUT,
    max_output_tokens: 0,
    tier: 'standard',
    lane: 'vendor',
    price: inputOnly('usd', 0.1),
    embedding: { dimensions: 1_536, adjustable_dimensions: false },
    price_source: OPENAI_PRICING,
    priced_on: '2026-11-27',
  },
  {
    id: 'gemini-3.1-pro-preview',
    vendor: 'google',
    display_name: 'Gemini 3.1 Pro Preview',
    created: released('2026-02-19'),
    context_window: 1_048_576,
    max_output_tokens: 65_536,
    tier: 'frontier',
    lane: 'vendor',
    price: {
      currency: 'usd',
      input: 2,
      output: 12,
      cache_read: 0.2,
      cache_write: 2,
      long_context: { above_input_tokens: 200_000, input: 4, output: 18, cache_read: 0.4, cache_write: 4 },
    },
    price_source: GOOGLE_PRICING,
    priced_on: '2026-10-07',
  },
];

/** Who makes a model. `house` models are the service's own agents, served by operator-configured engines. */
export type Vendor = 'house' | 'openai' | 'anthropic' | 'google';

/** A coarse capability/price band, shown in `GET /v1/models` and aliases. */
export type Tier = 'frontier' | 'standard' | 'fast';

/** `house` = served by house engines; `vendor` = a vendor model, dialed on service credits or the caller's own key. */
export type Lane = 'house' | 'vendor';

/** Rates per 1M tokens for each bucket of a call. */
export interface TokenRates {
  /** Uncached input. */
  input: number;
  output: number;
  /** Input served from the provider's prompt cache. */
  cache_read: number;
  /** Input written to the provider's prompt cache (Anthropic's 5-minute write; OpenAI's cache write). */
  cache_write: number;
}

/**
 * A model's list price. Vendor models are priced in USD; house models in credits (1 credit = $0.001), as the
 * spec writes them, so the numbers here can be checked against it by eye.
 */
export interface ModelPrice extends TokenRates {
  currency: 'usd' | 'credits';
  /**
   * Some vendors bill the whole call at higher rates once the prompt passes a size (OpenAI above 272K input
   * tokens, Gemini above 200K). Absent means one rate at every size.
   */
  long_context?: TokenRates & { above_input_tokens: number };
}

/** What a model answers: `chat` the three chat dialects, `embedding` `POST /v1/embeddings`. */
export type ModelKind = 'chat' | 'embedding';

/** What an embedding model returns. */
interface EmbeddingSpec {
  /** The length of its vectors when the caller names no `dimensions`. */
  dimensions: number;
  /** Whether it honours a smaller `dimensions` (OpenAI: text-embedding-3 and later; ada-002 does not). */
  adjustable_dimensions: boolean;
}

export interface CatalogModel {
  id: string;
  vendor: Vendor;
  display_name: string;
  /** Release date, unix seconds (the Model resource's `created`). */
  created: number;
  context_window: number;
  /** 0 for embedding models, which produce no tokens. */
  max_output_tokens: number;
  tier: Tier;
  lane: Lane;
  price: ModelPrice;
  /** Set on embedding models (their kind is `embedding`; every other model is a chat model). */
  embedding?: EmbeddingSpec;
  /** Where the price was read and when, so the next person to update it knows what to re-check. */
  price_source: string;
  priced_on: string;
}

/** A built-in `@token` that names a catalog model (the spec's Alias, minus the per-caller fields). */
export interface BuiltInAlias {
  vendor: Vendor;
  model_id: string;
  label: string;
  tier: Tier;
}

/**
 * Token counts of one call. `inputTokens` is the whole prompt, INCLUDING the tokens read from and written to
 * the cache (the way OpenAI and Gemini report it; the Anthropic dialect adds its three input fields up).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

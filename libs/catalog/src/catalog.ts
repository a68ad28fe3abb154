import { MODELS } from './models';
import type { BuiltInAlias, CatalogModel, ModelKind } from './types';

/** Every model the service knows a price for: the house models first, then vendor models. */
export const CATALOG: readonly CatalogModel[] = MODELS;

// Looked up on every model call, so a map instead of a scan.
const byId = new Map(CATALOG.map((model) => [model.id, model]));

/** The catalog row for an exact, case-sensitive model id; undefined when the catalog does not list it. */
export function findCatalogModel(id: string): CatalogModel | undefined {
  return byId.get(id);
}

/** What the model answers: an embedding model `POST /v1/embeddings`, any other the chat dialects. */
export function modelKindOf(model: CatalogModel): ModelKind {
  return model.embedding ? 'embedding' : 'chat';
}

/**
 * The house models, which always answer whether or not the caller linked a provider: the spec's three agents,
 * and the house embedding model.
 */
export const HOUSE_MODELS = ['house', 'house-omni', 'house-fast', 'house-embed'] as const;

export type HouseModelId = (typeof HOUSE_MODELS)[number];

const houseIds: ReadonlySet<string> = new Set(HOUSE_MODELS);

export function isHouseModel(id: string): id is HouseModelId {
  return houseIds.has(id);
}

/**
 * Built-in `@mention` aliases, in the order `GET /v1/aliases` lists them (after the caller's own). Each names a
 * catalog model; a personal alias with the same token wins (CONTRACTS: personal aliases resolve first).
 */
export const BUILT_IN_ALIASES: Readonly<Record<`@${string}`, BuiltInAlias>> = {
  '@house': { vendor: 'house', model_id: 'house', label: 'House', tier: 'frontier' },
  '@omni': { vendor: 'house', model_id: 'house-omni', label: 'House Omni', tier: 'frontier' },
  '@fast': { vendor: 'house', model_id: 'house-fast', label: 'House Fast', tier: 'fast' },
  // Anthropic's own advice is to start with Opus and step up to Fable for the hardest work.
  '@claude': { vendor: 'anthropic', model_id: 'claude-opus-5-5', label: 'Claude Opus 5.5', tier: 'frontier' },
  '@fable': { vendor: 'anthropic', model_id: 'claude-fable-5-2', label: 'Claude Fable 5.2', tier: 'frontier' },
  '@sonnet': { vendor: 'anthropic', model_id: 'claude-sonnet-5-5', label: 'Claude Sonnet 5.5', tier: 'standard' },
  '@haiku': { vendor: 'anthropic', model_id: 'claude-haiku-4-5', label: 'Claude Haiku 4.5', tier: 'fast' },
  // Sol is OpenAI's everyday model; Astra is a separate, pricier step up.
  '@gpt': { vendor: 'openai', model_id: 'gpt-6.1-sol', label: 'GPT-6.1 Sol', tier: 'standard' },
  '@astra': { vendor: 'openai', model_id: 'gpt-6-astra', label: 'GPT-6 Astra', tier: 'frontier' },
  '@gemini': {
    vendor: 'google',
    model_id: 'gemini-3.1-pro-preview',
    label: 'Gemini 3.1 Pro Preview',
    tier: 'frontier',
  },
};

/** Alias tokens arrive with or without their `@` (CONTRACTS: the path accepts both). */
export function findBuiltInAlias(token: string): BuiltInAlias | undefined {
  const key = (token.startsWith('@') ? token : `@${token}`) as `@${string}`;
  return Object.hasOwn(BUILT_IN_ALIASES, key) ? BUILT_IN_ALIASES[key] : undefined;
}

import { creditsForUsd, findBuiltInAlias, findCatalogModel, listCostUsd, modelAllowed, worstCaseCostUsd, type ModelPrice } from '@sbc/catalog';
import type { Usage } from '@sbc/dialects';
import type { ResolvedRoute } from '../routing/resolve';

/** Bytes of JSON per input token, taken low so a reservation errs on the side of too much. */
const BYTES_PER_TOKEN_FLOOR = 3;

/**
 * What the edge needs from the catalog on a call: the price of the model that served it (list cost is
 * recorded for every call, BYO included, so usage shows what it would have cost), worst-case reservations,
 * `allowed_models` globs, and the lookups routing uses.
 */
export function createPricing() {
  return {
    priceOf(route: ResolvedRoute): ModelPrice | undefined {
      if (route.catalogId) return findCatalogModel(route.catalogId)?.price;
      const model = route.engines[0]?.model;
      return model ? findCatalogModel(model)?.price : undefined;
    },
    costUsd(price: ModelPrice, usage: Usage): number {
      return listCostUsd(price, usage);
    },
    /** The most the call can cost, in millicredits, from its body size and output cap. */
    worstCaseMilli(price: ModelPrice, request: { bodyBytes: number; maxOutputTokens: number }): number {
      const usd = worstCaseCostUsd(price, { inputTokens: Math.ceil(request.bodyBytes / BYTES_PER_TOKEN_FLOOR), maxOutputTokens: request.maxOutputTokens });
      return Math.ceil(creditsForUsd(usd) * 1_000);
    },
    modelAllowed(globs: readonly string[], model: string): boolean {
      return modelAllowed(globs, model);
    },
    catalogVendor(modelId: string): string | undefined {
      const model = findCatalogModel(modelId);
      return model && model.vendor !== 'house' ? model.vendor : undefined;
    },
    builtInAlias(token: string): { vendor: string; modelId: string } | undefined {
      const alias = findBuiltInAlias(token);
      return alias ? { vendor: alias.vendor, modelId: alias.model_id } : undefined;
    },
  };
}

export type Pricing = ReturnType<typeof createPricing>;

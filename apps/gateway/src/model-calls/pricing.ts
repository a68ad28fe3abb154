import { findBuiltInAlias, findCatalogModel, listCostNanoUsd, modelAllowed, type ModelPrice } from '@sbc/catalog';
import type { NanoUsd } from '@sbc/money';
import type { Usage } from '@sbc/dialects';
import type { ResolvedRoute } from '../routing/resolve';

/**
 * What the edge needs from the catalog on a call: the price of the model that served it (list cost is
 * recorded for every call, BYO included, so usage shows what it would have cost), output limits,
 * `allowed_models` globs, and the lookups routing uses.
 */
export function createPricing() {
  return {
    priceOf(route: ResolvedRoute): ModelPrice | undefined {
      if (route.catalogId) return findCatalogModel(route.catalogId)?.price;
      const model = route.engines[0]?.model;
      return model ? findCatalogModel(model)?.price : undefined;
    },
    costNanoUsd(price: ModelPrice, usage: Usage): NanoUsd {
      return listCostNanoUsd(price, usage);
    },
    /** The output limit the catalog gives the model that serves the route; undefined for a model it does not list. */
    outputLimitOf(route: ResolvedRoute): number | undefined {
      const model = route.catalogId ?? route.engines[0]?.model;
      return model ? findCatalogModel(model)?.max_output_tokens : undefined;
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

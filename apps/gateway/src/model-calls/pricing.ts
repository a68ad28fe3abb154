import { findBuiltInAlias, findCatalogModel, listCostNanoUsd, modelAllowed, type ModelPrice } from '@sbc/catalog';
import type { NanoUsd } from '@sbc/money';
import type { Usage } from '@sbc/dialects';
import type { Target } from '../routing/targets';

/**
 * What the edge needs from the catalog on a call: the price of the model that served it (list cost is
 * recorded for every call, BYO included, so usage shows what it would have cost), output limits,
 * `allowed_models` globs, and the lookups routing uses.
 */
export function createPricing() {
  return {
    priceOf(target: Target): ModelPrice | undefined {
      return findCatalogModel(target.catalogId ?? target.engine.model)?.price;
    },
    costNanoUsd(price: ModelPrice, usage: Usage): NanoUsd {
      return listCostNanoUsd(price, usage);
    },
    /** The output limit the catalog gives the model a target serves; undefined for a model it does not list. */
    outputLimitOf(target: Target): number | undefined {
      return findCatalogModel(target.catalogId ?? target.engine.model)?.max_output_tokens;
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

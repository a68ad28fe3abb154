export {
  BUILT_IN_ALIASES,
  CATALOG,
  findBuiltInAlias,
  findCatalogModel,
  HOUSE_MODELS,
  isHouseModel,
  modelKindOf,
  type HouseModelId,
} from './catalog';
export { modelAllowed } from './model-glob';
export {
  cacheDiscountNanoUsd,
  creditsForUsd,
  listCostNanoUsd,
  listCostUsd,
  USD_PER_CREDIT,
  usdForCredits,
  worstCaseCostNanoUsd,
  worstCaseCostUsd,
} from './pricing';
export type { BuiltInAlias, CatalogModel, Lane, ModelPrice, Tier, TokenRates, TokenUsage, Vendor } from './types';

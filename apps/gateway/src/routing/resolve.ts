import { isHouseModel } from '@sbc/catalog';
import type { GetRoutingTableResponse, RoutingUpstream } from '@sbc/proto/sbc/account/v1/account_pb';
import type { Engine, HouseEngines, ProviderEngines } from './engines';

/** Where a call goes, once its model id is resolved (CONTRACTS "Models and routing"). */
export interface ResolvedRoute {
  /** The id the caller named; replies echo it. */
  callerModel: string;
  kind: 'house' | 'byo' | 'provider';
  /** Tried in order; a later one only when an earlier one failed before its first byte. */
  engines: Engine[];
  /** For usage: `house`, `byo:<slug>` or `provider:<vendor>`. */
  upstream: string;
  /** The catalog entry that prices the call (house and provider routes). */
  catalogId?: string;
}

export type RouteRefusal = { refused: 'not_found' | 'not_allowed' | 'not_configured'; message: string };

export type KeyRoute = 'byo' | 'credits' | 'auto';

export interface ResolveContext {
  /** The key's route; sessions and device tokens resolve as `auto`. */
  keyRoute: KeyRoute;
  house: HouseEngines;
  providers: ProviderEngines;
  /** The caller's endpoints and aliases; only fetched when the model is not a house model. */
  table?: GetRoutingTableResponse;
  /** The vendor of a catalog model, or undefined when the catalog does not list it. */
  catalogVendor(modelId: string): string | undefined;
  /** Built-in aliases (`@claude` …) after the caller's own. */
  builtInAlias(token: string): { vendor: string; modelId: string } | undefined;
}

function byoEngine(upstream: RoutingUpstream, model: string): Engine {
  return {
    // An `auto` endpoint is recorded with the dialect that answered its probe; unprobed ones are tried as OpenAI.
    dialect: upstream.dialect === 'anthropic' ? 'anthropic' : 'openai',
    baseUrl: upstream.baseUrl,
    apiKey: upstream.apiKey || undefined,
    model,
    headers: upstream.headers,
    label: `byo:${upstream.slug}`,
  };
}

function houseRoute(callerModel: string, houseId: string, ctx: ResolveContext): ResolvedRoute | RouteRefusal {
  if (ctx.keyRoute === 'byo')
    return {
      refused: 'not_allowed',
      message: `This key's route is "byo": it may only call models on its own endpoints, not ${houseId}.`,
    };
  const engines = ctx.house[houseId];
  if (!engines || engines.length === 0)
    return { refused: 'not_configured', message: `No engine is configured for ${houseId}.` };
  return { callerModel, kind: 'house', engines, upstream: 'house', catalogId: houseId };
}

/** The caller's endpoint listing `model`; the most recently probed wins a tie. */
function upstreamListing(model: string, upstreams: RoutingUpstream[]): RoutingUpstream | undefined {
  let best: RoutingUpstream | undefined;
  for (const upstream of upstreams) {
    if (!upstream.models.includes(model)) continue;
    if (!best || upstream.probedAtMs > best.probedAtMs) best = upstream;
  }
  return best;
}

function vendorModel(callerModel: string, modelId: string, ctx: ResolveContext): ResolvedRoute | RouteRefusal {
  const upstreams = ctx.table?.upstreams ?? [];
  const slash = modelId.indexOf('/');
  if (slash > 0) {
    const slug = modelId.slice(0, slash);
    const explicit = upstreams.find((upstream) => upstream.slug === slug);
    if (explicit) {
      if (ctx.keyRoute === 'credits')
        return {
          refused: 'not_allowed',
          message: `This key's route is "credits": it may not call your own endpoint ${slug}.`,
        };
      return {
        callerModel,
        kind: 'byo',
        engines: [byoEngine(explicit, modelId.slice(slash + 1))],
        upstream: `byo:${slug}`,
      };
    }
  }
  if (ctx.keyRoute !== 'credits') {
    const listing = upstreamListing(modelId, upstreams);
    if (listing)
      return { callerModel, kind: 'byo', engines: [byoEngine(listing, modelId)], upstream: `byo:${listing.slug}` };
  }
  const vendor = ctx.catalogVendor(modelId);
  if (vendor === undefined)
    return {
      refused: 'not_found',
      message: `The model ${callerModel} does not exist or is not available to this key.`,
    };
  if (ctx.keyRoute === 'byo')
    return {
      refused: 'not_allowed',
      message: `This key's route is "byo" and none of your endpoints lists ${modelId}.`,
    };
  const provider = ctx.providers[vendor];
  if (!provider)
    return {
      refused: 'not_configured',
      message:
        `${modelId} is not offered on service credits here: no ${vendor} engine is configured. Add your own ` +
        `endpoint for it.`,
    };
  return {
    callerModel,
    kind: 'provider',
    engines: [{ ...provider, model: modelId }],
    upstream: `provider:${vendor}`,
    catalogId: modelId,
  };
}

/**
 * Resolution order: house models; the caller's aliases (`@token`), then built-in ones; an explicit
 * `<upstream-slug>/<model>`; a model listed by the caller's endpoints; a catalog model on service credits.
 */
export function resolveModel(model: string, ctx: ResolveContext): ResolvedRoute | RouteRefusal {
  if (isHouseModel(model)) return houseRoute(model, model, ctx);
  if (model.startsWith('@')) {
    const own = ctx.table?.aliases.find((alias) => alias.token === model);
    const target = own ? { vendor: own.vendor, modelId: own.modelId } : ctx.builtInAlias(model);
    if (!target) return { refused: 'not_found', message: `No alias ${model} on this account.` };
    if (target.vendor === 'house' || isHouseModel(target.modelId)) return houseRoute(model, target.modelId, ctx);
    const onEndpoint = ctx.table?.upstreams.find((upstream) => upstream.slug === target.vendor);
    if (onEndpoint) return vendorModel(model, `${onEndpoint.slug}/${target.modelId}`, ctx);
    return vendorModel(model, target.modelId, ctx);
  }
  return vendorModel(model, model, ctx);
}

export function isRefusal(value: ResolvedRoute | RouteRefusal): value is RouteRefusal {
  return 'refused' in value;
}

import { isHouseModel } from '@sbc/catalog';
import type { EgressCaller } from '@sbc/egress';
import type { GetRoutingTableResponse, RoutingUpstream } from '@sbc/proto/sbc/account/v1/account_pb';
import type { Engine, HouseEngines, ProviderEngines } from './engines';
import { weightedOrder, type Target } from './targets';

/** Where a call may go, once its model id is resolved (CONTRACTS "Models and routing", "Routing policy"). */
export interface ResolvedRoute {
  /** The id the caller named; replies echo it. */
  callerModel: string;
  /** Tried in order; a later one only when an earlier one failed before its first byte. Never empty. */
  targets: Target[];
}

export type RouteRefusal = { refused: 'not_found' | 'not_allowed' | 'not_configured'; message: string };

export type KeyRoute = 'byo' | 'credits' | 'auto';

export interface ResolveContext {
  /** The key's route; sessions and device tokens resolve as `auto`. */
  keyRoute: KeyRoute;
  /** The caller's user id: its endpoints' cooldowns are its own. */
  ownerId: string;
  /** How the caller's own endpoints are dialed: loopback and private addresses only when it may (CONTRACTS Egress). */
  dialAs: EgressCaller;
  house: HouseEngines;
  providers: ProviderEngines;
  /** The caller's endpoints and aliases; only fetched when the model is not a house model. */
  table?: GetRoutingTableResponse;
  /** The vendor of a catalog model, or undefined when the catalog does not list it. */
  catalogVendor(modelId: string): string | undefined;
  /** Built-in aliases (`@claude` …) after the caller's own. */
  builtInAlias(token: string): { vendor: string; modelId: string } | undefined;
}

function byoTarget(upstream: RoutingUpstream, model: string, callerModel: string, ctx: ResolveContext): Target {
  const engine: Engine = {
    // An `auto` endpoint is recorded with the dialect that answered its probe; unprobed ones are tried as OpenAI.
    dialect: upstream.dialect === 'anthropic' ? 'anthropic' : 'openai',
    baseUrl: upstream.baseUrl,
    apiKey: upstream.apiKey || undefined,
    model,
    headers: upstream.headers,
    label: `byo:${upstream.slug}`,
    dialAs: ctx.dialAs,
    anthropicBeta: upstream.anthropicBeta,
  };
  const label = `byo:${upstream.slug}`;
  return { engine, kind: 'byo', label, upstream: label, healthKey: `byo:${ctx.ownerId}:${upstream.slug}`, callerModel };
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
  const targets = engines.map((engine): Target => ({
    engine,
    kind: 'house',
    label: 'house',
    upstream: 'house',
    healthKey: operatorHealthKey(`house:${houseId}/${engine.label}`, engine),
    callerModel,
    catalogId: houseId,
  }));
  return { callerModel, targets };
}

/**
 * An operator engine's health key: its metrics label, then where it is, so a changed configuration (or another
 * stack on the same Redis) never inherits a cooldown meant for another engine under the same name.
 */
function operatorHealthKey(label: string, engine: { baseUrl: string; model?: string }): string {
  return `${label}|${engine.baseUrl}#${engine.model ?? ''}`;
}

/** The service's deployments of a vendor for one catalog model, balanced by their weights. */
function providerTargets(vendor: string, modelId: string, callerModel: string, ctx: ResolveContext): Target[] {
  const deployments = weightedOrder(ctx.providers[vendor] ?? [], (deployment) => deployment.weight);
  return deployments.map((deployment) => {
    const label = `provider:${vendor}/${deployment.label}`;
    return {
      engine: {
        dialect: deployment.dialect,
        baseUrl: deployment.baseUrl,
        apiKey: deployment.apiKey,
        headers: deployment.headers,
        label: deployment.label,
        model: modelId,
        anthropicBeta: deployment.anthropicBeta,
      },
      kind: 'provider',
      label,
      upstream: `provider:${vendor}`,
      healthKey: operatorHealthKey(label, deployment),
      callerModel,
      catalogId: modelId,
      limits: deployment.rpm || deployment.tpm ? { rpm: deployment.rpm, tpm: deployment.tpm } : undefined,
    };
  });
}

/** Every one of the caller's endpoints listing `model`, balanced by their weights. */
function listingTargets(model: string, callerModel: string, ctx: ResolveContext): Target[] {
  const listing = (ctx.table?.upstreams ?? []).filter((upstream) => upstream.models.includes(model));
  return weightedOrder(listing, (upstream) => upstream.weight).map((upstream) =>
    byoTarget(upstream, model, callerModel, ctx),
  );
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
      return { callerModel, targets: [byoTarget(explicit, modelId.slice(slash + 1), callerModel, ctx)] };
    }
  }
  const own = ctx.keyRoute === 'credits' ? [] : listingTargets(modelId, callerModel, ctx);
  const vendor = ctx.catalogVendor(modelId);
  // Route `auto` falls back from the caller's own endpoints to the service's deployments; `byo` never does.
  const onCredits =
    vendor !== undefined && ctx.keyRoute !== 'byo' ? providerTargets(vendor, modelId, callerModel, ctx) : [];
  if (own.length > 0 || onCredits.length > 0) return { callerModel, targets: own.concat(onCredits) };
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
  return {
    refused: 'not_configured',
    message:
      `${modelId} is not offered on service credits here: no ${vendor} engine is configured. Add your own ` +
      `endpoint for it.`,
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

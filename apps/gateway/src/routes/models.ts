import { Router } from 'express';
import { gatewayRoutes } from '@sbc/api';
import { CATALOG, HOUSE_MODELS, findCatalogModel, modelAllowed, modelKindOf, type CatalogModel } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import { pageOf } from '@sbc/pagination';
import type { GetRoutingTableResponse } from '@sbc/proto/sbc/account/v1/account_pb';
import type { Authorize } from '../auth/authorize';
import type { Principal } from '../auth/authenticator';
import { keyRouteOf } from '../model-calls/route-call';
import type { EngineReachability } from '../routing/engine-reachability';
import type { Engine, HouseEngines, ProviderEngines } from '../routing/engines';
import type { RoutingTables } from '../routing/routing-tables';
import { mount } from '../http/mount';

interface ModelEntry {
  id: string;
  created: number;
  owned_by: string;
  display_name: string;
  lane: string;
  tier?: string;
  available: boolean;
  reason?: string;
  context_window?: number;
  max_tokens?: number;
  /** The catalog's kind (`chat`, `embedding`) and an embedding model's dimensions; unset for a model it lacks. */
  kind?: string;
  dimensions?: number;
}

/** What the catalog says a model is: its kind, and an embedding model's vector length. */
function kindOf(model: CatalogModel | undefined): Pick<ModelEntry, 'kind' | 'dimensions'> {
  if (!model) return {};
  return { kind: modelKindOf(model), dimensions: model.embedding?.dimensions };
}

/**
 * One item both SDKs can read: the spec's Model (`object`, `created`, `owned_by`, `lane`, `tier`,
 * `available`, `reason`, `context_window`/`context_length`) and Anthropic's ModelInfo (`type`,
 * `display_name`, `created_at`, `max_input_tokens`, `max_tokens`).
 */
function renderModel(entry: ModelEntry): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id: entry.id,
    object: 'model',
    created: entry.created,
    owned_by: entry.owned_by,
    type: 'model',
    display_name: entry.display_name,
    created_at: new Date(entry.created * 1000).toISOString().replace('.000Z', 'Z'),
    lane: entry.lane,
    available: entry.available,
  };
  if (entry.tier) item.tier = entry.tier;
  if (entry.reason) item.reason = entry.reason;
  if (entry.context_window) {
    item.context_window = entry.context_window;
    item.context_length = entry.context_window;
    item.max_input_tokens = entry.context_window;
  }
  if (entry.max_tokens) item.max_tokens = entry.max_tokens;
  if (entry.kind) item.kind = entry.kind;
  if (entry.dimensions) item.dimensions = entry.dimensions;
  return item;
}

export interface ModelRoutesDeps {
  authorize: Authorize;
  house: HouseEngines;
  providers: ProviderEngines;
  routing: RoutingTables;
  /** What the edge last learnt about its house engines; without it every configured engine counts as served. */
  reachability?: Pick<EngineReachability, 'reachOf'>;
}

/** A house model's availability and reason, as the edge last saw its engines. */
function houseStatus(deps: ModelRoutesDeps, engines: Engine[]): { available: boolean; reason: string } {
  if (engines.length === 0) return { available: false, reason: 'no engine configured' };
  const down = engines.filter((engine) => deps.reachability?.reachOf(engine)?.reachable === false);
  const up = engines.filter((engine) => !down.includes(engine));
  const cannotReach = down
    .map((engine) => `${engine.label} (${deps.reachability?.reachOf(engine)?.error ?? 'unreachable'})`)
    .join(', ');
  if (up.length === 0) return { available: false, reason: `the edge cannot reach its engine: ${cannotReach}` };
  const served = `served by ${up.map((engine) => engine.label).join(', then ')}`;
  return { available: true, reason: down.length > 0 ? `${served}; cannot reach ${cannotReach}` : served };
}

/** Every id the principal can name, in resolution order: house, own aliases, own endpoints, catalog. */
export function listModels(deps: ModelRoutesDeps, principal: Principal, table: GetRoutingTableResponse): ModelEntry[] {
  const route = keyRouteOf(principal);
  const allowed = principal.key?.allowedModels?.values;
  const entries: ModelEntry[] = [];
  const seen = new Set<string>();
  const add = (entry: ModelEntry) => {
    if (seen.has(entry.id) || (allowed && !modelAllowed(allowed, entry.id))) return;
    seen.add(entry.id);
    entries.push(entry);
  };
  for (const id of HOUSE_MODELS) {
    const model = findCatalogModel(id);
    const house = houseStatus(deps, deps.house[id] ?? []);
    add({
      id,
      created: model?.created ?? 0,
      owned_by: 'house',
      display_name: model?.display_name ?? id,
      lane: 'house',
      tier: model?.tier,
      available: route !== 'byo' && house.available,
      reason: route === 'byo' ? 'this key\'s route is "byo"' : house.reason,
      context_window: model?.context_window,
      max_tokens: model?.max_output_tokens,
      ...kindOf(model),
    });
  }
  for (const alias of table.aliases) {
    add({
      id: alias.token,
      created: 0,
      owned_by: alias.vendor,
      display_name: `${alias.token} → ${alias.modelId}`,
      lane: 'alias',
      available: true,
      reason: `alias of ${alias.modelId}`,
    });
  }
  if (route !== 'credits') {
    for (const upstream of [...table.upstreams].sort((a, b) => Number(b.probedAtMs - a.probedAtMs))) {
      for (const id of upstream.models) {
        const model = findCatalogModel(id);
        add({
          id,
          created: model?.created ?? 0,
          owned_by: upstream.slug,
          display_name: model?.display_name ?? id,
          lane: 'byo',
          tier: model?.tier,
          available: true,
          reason: `on your endpoint ${upstream.slug}`,
          context_window: model?.context_window,
          max_tokens: model?.max_output_tokens,
          ...kindOf(model),
        });
      }
    }
  }
  for (const model of CATALOG) {
    if (model.vendor === 'house') continue;
    const engine = deps.providers[model.vendor];
    const available = route !== 'byo' && engine !== undefined;
    add({
      id: model.id,
      created: model.created,
      owned_by: model.vendor,
      display_name: model.display_name,
      lane: 'credits',
      tier: model.tier,
      available,
      reason: available
        ? 'on service credits'
        : route === 'byo'
          ? 'this key\'s route is "byo"'
          : `no ${model.vendor} engine on this service; add your own endpoint`,
      context_window: model.context_window,
      max_tokens: model.max_output_tokens,
      ...kindOf(model),
    });
  }
  return entries;
}

/**
 * `GET /v1/models` (any key): the OpenAI list shape with Anthropic's paging fields, so both SDKs can list.
 * Without `limit` every model comes in one page (OpenAI clients do not page); with it, `after_id` and
 * `before_id` page in list order as Anthropic's API does.
 */
export function modelRoutes(deps: ModelRoutesDeps): Router {
  const router = Router();
  const modelsOf = async (principal: Principal, requestId: string) => {
    const table = await deps.routing.tableFor(principal.userId, principal.key?.orgId, requestId);
    return listModels(deps, principal, table).map(renderModel);
  };

  mount(router, gatewayRoutes.listModels, deps.authorize, async ({ principal, query, req, requestId }) => {
    const all = await modelsOf(principal, requestId);
    const paged = 'limit' in req.query || query.after_id !== undefined || query.before_id !== undefined;
    return { status: 200, body: pageOf(all, paged ? query : { limit: all.length }, (item) => item.id as string) };
  });

  mount(router, gatewayRoutes.getModel, deps.authorize, async ({ principal, params, requestId }) => {
    const found = (await modelsOf(principal, requestId)).find((item) => item.id === params.model);
    if (!found)
      throw new ApiError('not_found', `The model ${params.model} does not exist or is not available to this key.`, {
        param: 'model',
      });
    return { status: 200, body: found };
  });

  return router;
}

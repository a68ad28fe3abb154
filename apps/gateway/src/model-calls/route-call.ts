import { isHouseModel } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import type { Principal } from '../auth/authenticator';
import type { HouseEngines, ProviderEngines } from '../routing/engines';
import { isRefusal, resolveModel, type KeyRoute, type ResolvedRoute } from '../routing/resolve';
import type { RoutingTables } from '../routing/routing-tables';
import type { Pricing } from './pricing';

export interface RouteCallDeps {
  house: HouseEngines;
  providers: ProviderEngines;
  routing: RoutingTables;
  pricing: Pricing;
}

export function keyRouteOf(principal: Principal): KeyRoute {
  const route = principal.key?.route;
  return route === 'byo' || route === 'credits' ? route : 'auto';
}

/**
 * Resolves the caller's model id to its engines, enforcing the key's `allowed_models` globs and `route`.
 * House models resolve without any lookup; other ids read the account's cached routing table.
 */
export async function resolveCallRoute(
  deps: RouteCallDeps,
  principal: Principal,
  model: string,
  requestId: string,
): Promise<ResolvedRoute> {
  const allowed = principal.key?.allowedModels?.values;
  if (allowed && !deps.pricing.modelAllowed(allowed, model)) {
    throw new ApiError(
      'model_not_allowed',
      `This key may not call ${model}; its allowed_models are ${allowed.join(', ') || '(none)'}.`,
      { param: 'model' },
    );
  }
  const table = isHouseModel(model)
    ? undefined
    : await deps.routing.tableFor(principal.userId, principal.key?.orgId, requestId);
  const resolved = resolveModel(model, {
    keyRoute: keyRouteOf(principal),
    house: deps.house,
    providers: deps.providers,
    table,
    catalogVendor: (id) => deps.pricing.catalogVendor(id),
    builtInAlias: (token) => deps.pricing.builtInAlias(token),
  });
  // A caller's own endpoints are dialed for that caller: loopback and private addresses only when it may (CONTRACTS
  // Egress).
  if (!isRefusal(resolved))
    return resolved.kind === 'byo'
      ? {
          ...resolved,
          engines: resolved.engines.map((engine) => ({
            ...engine,
            dialAs: principal.operator ? 'operator' : 'tenant',
          })),
        }
      : resolved;
  if (resolved.refused === 'not_allowed') throw new ApiError('model_not_allowed', resolved.message, { param: 'model' });
  if (resolved.refused === 'not_configured') throw new ApiError('not_found', resolved.message, { param: 'model' });
  throw new ApiError('not_found', resolved.message, { param: 'model' });
}

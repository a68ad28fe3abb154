import { isHouseModel } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import type { Principal } from '../auth/authenticator';
import type { HouseEngines, ProviderEngines } from '../routing/engines';
import { isRefusal, resolveModel, type KeyRoute, type ResolvedRoute, type RouteRefusal } from '../routing/resolve';
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
 * Resolves the caller's model id to its targets, then each fallback model's (`models`, tried in order once the
 * named model's are exhausted), enforcing the key's `allowed_models` globs and `route`. Every id is checked
 * before any upstream is called: a bad fallback is a 400 on `models`. House models resolve without any lookup;
 * other ids read the account's cached routing table.
 */
export async function resolveCallRoute(
  deps: RouteCallDeps,
  principal: Principal,
  model: string,
  requestId: string,
  fallbackModels: readonly string[] = [],
): Promise<ResolvedRoute> {
  const needsTable = !isHouseModel(model) || fallbackModels.some((id) => !isHouseModel(id));
  const table = needsTable ? await deps.routing.tableFor(principal.userId, principal.key?.orgId, requestId) : undefined;
  const context = {
    keyRoute: keyRouteOf(principal),
    ownerId: principal.userId,
    dialAs: principal.operator ? ('operator' as const) : ('tenant' as const),
    house: deps.house,
    providers: deps.providers,
    table,
    catalogVendor: (id: string) => deps.pricing.catalogVendor(id),
    builtInAlias: (token: string) => deps.pricing.builtInAlias(token),
  };
  const resolveChecked = (id: string, param: string): ResolvedRoute => {
    const allowed = principal.key?.allowedModels?.values;
    if (allowed && !deps.pricing.modelAllowed(allowed, id)) {
      const message = `This key may not call ${id}; its allowed_models are ${allowed.join(', ') || '(none)'}.`;
      throw refusalError({ refused: 'not_allowed', message }, param);
    }
    const resolved = resolveModel(id, context);
    if (isRefusal(resolved)) throw refusalError(resolved, param);
    return resolved;
  };
  const route = resolveChecked(model, 'model');
  if (fallbackModels.length === 0) return route;
  const seen = new Set([model]);
  let targets = route.targets;
  for (const id of fallbackModels) {
    if (seen.has(id)) continue;
    seen.add(id);
    targets = targets.concat(resolveChecked(id, 'models').targets);
  }
  return { callerModel: model, targets };
}

function refusalError(refusal: RouteRefusal, param: string): ApiError {
  // A fallback the caller cannot use is its request's fault, whatever the reason.
  if (param === 'models') return ApiError.invalid([{ path: param, code: 'invalid_value', message: refusal.message }]);
  if (refusal.refused === 'not_allowed') return new ApiError('model_not_allowed', refusal.message, { param });
  return new ApiError('not_found', refusal.message, { param });
}

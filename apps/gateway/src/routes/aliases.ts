import { Router, type Response } from 'express';
import { upstreamRoutes as specs } from '@sbc/api';
import type { PubSub } from '@sbc/cache';
import { BUILT_IN_ALIASES, CATALOG } from '@sbc/catalog';
import { ALIASES_CHANGED_CHANNEL } from '@sbc/events';
import type { ListAliasesResponse, UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { mount } from '../http/mount';
import type { HouseEngines, ProviderEngines } from '../routing/engines';

export interface AliasRoutesDeps {
  authorize: Authorize;
  upstreams: RpcClientOf<typeof UpstreamService>;
  house: HouseEngines;
  providers: ProviderEngines;
  pubsub: PubSub;
  /** Aborted when the edge starts draining: open event streams end so shutdown does not wait on them. */
  draining: AbortSignal;
}

interface AliasItem {
  token: string;
  vendor: string;
  model_id: string;
  label: string;
  tier: string;
  custody: string;
  available: boolean;
  source: 'personal' | 'built_in' | 'catalog';
  rev?: number;
}

/** What the account service publishes on ALIASES_CHANGED_CHANNEL. */
interface AliasChange {
  user_id: string;
  token: string;
  rev: number;
  deleted: boolean;
}

function parseChange(message: string): AliasChange | undefined {
  try {
    const change = JSON.parse(message) as Partial<AliasChange>;
    if (typeof change.user_id !== 'string' || typeof change.token !== 'string' || typeof change.rev !== 'number')
      return undefined;
    return { user_id: change.user_id, token: change.token, rev: change.rev, deleted: change.deleted === true };
  } catch {
    return undefined;
  }
}

/**
 * The spec's alias list: own aliases, the built-in ones a personal alias does not shadow, then every catalog
 * model as `@<id>`. `available` says whether the vendor is linked: one of the caller's endpoints lists the
 * model (`<slug>/<model>` counts by its model), or the service holds an engine for it (a house engine for a
 * house model, a provider engine for the vendor).
 */
function aliasList(
  table: ListAliasesResponse,
  engines: { house: HouseEngines; providers: ProviderEngines },
): AliasItem[] {
  const endpointModels = new Set(table.endpointModels);
  const available = (vendor: string, modelId: string) =>
    endpointModels.has(modelId) ||
    endpointModels.has(modelId.slice(modelId.indexOf('/') + 1)) ||
    (vendor === 'house' ? (engines.house[modelId]?.length ?? 0) > 0 : engines.providers[vendor] !== undefined);
  const items: AliasItem[] = table.aliases.map((alias) => ({
    token: alias.token,
    vendor: alias.vendor,
    model_id: alias.modelId,
    label: alias.label,
    tier: alias.tier,
    custody: alias.custody,
    available: available(alias.vendor, alias.modelId),
    source: 'personal',
    rev: Number(alias.rev),
  }));
  const listed = new Set(items.map((item) => item.token));
  const add = (item: AliasItem) => {
    if (listed.has(item.token)) return;
    listed.add(item.token);
    items.push(item);
  };
  for (const [token, alias] of Object.entries(BUILT_IN_ALIASES)) {
    add({
      token,
      ...alias,
      custody: 'envelope',
      available: available(alias.vendor, alias.model_id),
      source: 'built_in',
    });
  }
  for (const model of CATALOG) {
    add({
      token: `@${model.id}`,
      vendor: model.vendor,
      model_id: model.id,
      label: model.display_name,
      tier: model.tier,
      custody: 'envelope',
      available: available(model.vendor, model.id),
      source: 'catalog',
    });
  }
  return items;
}

function sendEvent(res: Response, event: string, data: unknown, id?: number): void {
  res.write(`event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`);
}

function lastEventId(header: string | string[] | undefined): number | undefined {
  return typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
}

export function aliasRoutes(deps: AliasRoutesDeps): Router {
  const router = Router();

  mount(router, specs.listAliases, deps.authorize, async ({ principal, res, requestId }) => {
    const table = await deps.upstreams.listAliases({ userId: principal.userId }, { requestId });
    res.setHeader('x-alias-rev', String(table.rev));
    return { status: 200, body: aliasList(table, deps) };
  });

  mount(router, specs.aliasEvents, deps.authorize, async ({ principal, query, req, res, requestId }) => {
    const since = query.since_rev ?? lastEventId(req.headers['last-event-id']);
    // Subscribed before the revision is read, so a change made in between is held back and sent after the
    // sync event instead of being lost.
    const stream: { syncedRev?: number; heartbeat?: NodeJS.Timeout; stopped: boolean } = { stopped: false };
    const held: AliasChange[] = [];
    const relay = (change: AliasChange) =>
      sendEvent(res, 'alias.changed', { token: change.token, rev: change.rev, deleted: change.deleted }, change.rev);
    const unsubscribe = await deps.pubsub.subscribe(ALIASES_CHANGED_CHANNEL, (message) => {
      const change = parseChange(message);
      if (!change || change.user_id !== principal.userId) return;
      if (stream.syncedRev === undefined) held.push(change);
      else relay(change);
    });
    // A device reconnects with Last-Event-ID to another replica when this one drains.
    const endStream = () => res.end();
    const stop = () => {
      stream.stopped = true;
      clearInterval(stream.heartbeat);
      deps.draining.removeEventListener('abort', endStream);
      void unsubscribe();
    };
    // The device may hang up while the revision is read; 'close' has then fired already.
    if (req.destroyed) return stop();
    res.on('close', stop);
    let rev: number;
    try {
      rev = Number((await deps.upstreams.listAliases({ userId: principal.userId }, { requestId })).rev);
    } catch (error) {
      res.off('close', stop);
      stop();
      throw error;
    }
    if (stream.stopped) return;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    sendEvent(res, 'alias.sync', { rev, stale: since !== undefined && since < rev });
    stream.syncedRev = rev;
    for (const change of held) if (change.rev > rev) relay(change);
    stream.heartbeat = setInterval(() => res.write(': heartbeat\n\n'), specs.ALIAS_HEARTBEAT_S * 1000);
    if (deps.draining.aborted) endStream();
    else deps.draining.addEventListener('abort', endStream, { once: true });
  });

  mount(router, specs.putAlias, deps.authorize, async ({ principal, params, body, rpc }) => {
    const { write } = await deps.upstreams.putAlias(
      {
        userId: principal.userId,
        token: params.token,
        vendor: body.vendor,
        modelId: body.model_id,
        label: body.label,
        custody: body.custody,
      },
      rpc,
    );
    return { status: 200, body: { ok: true, token: write?.token, rev: Number(write?.rev) } };
  });

  mount(router, specs.deleteAlias, deps.authorize, async ({ principal, params, rpc }) => {
    const { write } = await deps.upstreams.deleteAlias({ userId: principal.userId, token: params.token }, rpc);
    return { status: 200, body: { ok: true, token: write?.token, rev: Number(write?.rev) } };
  });

  return router;
}

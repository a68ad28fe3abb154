import type { LocalCache, PubSub } from '@sbc/cache';
import { ROUTING_CHANGED_CHANNEL } from '@sbc/events';
import type { AccountService, GetRoutingTableResponse } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';

/**
 * Each account's endpoints and aliases, read through a local cache: a model call pays a gRPC round trip only
 * the first time an account calls a non-house model, and again only after the account changes its routing
 * (the account service publishes the change and every edge drops its copy) or the stale window ends.
 */
export function createRoutingTables(deps: {
  account: RpcClientOf<typeof AccountService>;
  cache: LocalCache<GetRoutingTableResponse>;
  pubsub: PubSub;
}) {
  // Tables are cached per user and team context. A change names a user id or a team (`org_…`) id and
  // drops every table that user's or that team's routing went into.
  const keysByOwner = new Map<string, Set<string>>();
  const remember = (owner: string, cacheKey: string) => {
    let keys = keysByOwner.get(owner);
    if (!keys) keysByOwner.set(owner, (keys = new Set()));
    keys.add(cacheKey);
  };
  let unsubscribe: (() => Promise<void> | void) | undefined;

  return {
    async tableFor(userId: string, orgId: string | undefined, requestId: string): Promise<GetRoutingTableResponse> {
      const cacheKey = `${userId}|${orgId ?? ''}`;
      remember(userId, cacheKey);
      if (orgId) remember(orgId, cacheKey);
      const table = await deps.cache.swr(cacheKey, () =>
        deps.account.getRoutingTable({ userId, orgId }, { requestId }),
      );
      return table ?? { $typeName: 'sbc.account.v1.GetRoutingTableResponse', upstreams: [], aliases: [] };
    },
    async start() {
      unsubscribe = await deps.pubsub.subscribe(ROUTING_CHANGED_CHANNEL, (owner) => {
        for (const key of keysByOwner.get(owner) ?? []) deps.cache.delete(key);
        keysByOwner.delete(owner);
      });
    },
    async stop() {
      await unsubscribe?.();
    },
  };
}

export type RoutingTables = ReturnType<typeof createRoutingTables>;

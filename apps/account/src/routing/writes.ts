import type { PubSub } from '@sbc/cache';
import { ROUTING_CHANGED_CHANNEL } from '@sbc/events';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import { saveAlias, type AliasView, type SaveAliasInput } from '../store/aliases';
import type { SecretCipher } from '../store/secrets';
import { saveUpstream, type SaveUpstreamInput, type UpstreamView } from '../store/upstreams';

/**
 * Writes that change what the edge routes to: each stores, then tells every edge to drop its cached routing
 * table. The REST routes call these, and integration tests seed rows through them (start() returns them as
 * `routing`), so seeded rows are encrypted with the service's own key exactly as real ones are.
 */
export interface RoutingWrites {
  saveUpstream(input: SaveUpstreamInput): Promise<UpstreamView>;
  saveAlias(input: SaveAliasInput): Promise<AliasView>;
}

export function createRoutingWrites(deps: { db: AccountDb; cipher: SecretCipher; pubsub: PubSub }): RoutingWrites {
  return {
    async saveUpstream(input) {
      const saved = await saveUpstream(deps.db, deps.cipher, input);
      await deps.pubsub.publish(ROUTING_CHANGED_CHANNEL, saved.userId);
      // Every member's team key routes to a shared endpoint, so their tables are stale too.
      if (saved.orgId) await deps.pubsub.publish(ROUTING_CHANGED_CHANNEL, saved.orgId);
      return saved;
    },
    async saveAlias(input) {
      const saved = await saveAlias(deps.db, input);
      await deps.pubsub.publish(ROUTING_CHANGED_CHANNEL, input.userId);
      return saved;
    },
  };
}

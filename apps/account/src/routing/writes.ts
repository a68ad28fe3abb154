import type { PubSub } from '@sbc/cache';
import { ALIASES_CHANGED_CHANNEL, ROUTING_CHANGED_CHANNEL } from '@sbc/events';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import { deleteAlias, saveAlias, type AliasView, type SaveAliasInput } from '../store/aliases';
import type { RecordChange } from '../store/audit';
import type { SecretCipher } from '../store/secrets';
import {
  createUpstream,
  deleteUpstream,
  recordProbe,
  saveUpstream,
  type ProbeFold,
  type SaveMode,
  type SaveUpstreamInput,
  type UpstreamView,
} from '../store/upstreams';

/**
 * Writes that change what the edge routes to: each stores, then tells every edge to drop its cached routing
 * table; alias writes also tell paired devices. The REST routes call these, and integration tests seed rows
 * through them (start() returns them as `routing`), so seeded rows are encrypted with the service's own key
 * exactly as real ones are. A write made for a caller takes `record`, which writes its audit record in the same
 * transaction; seeding passes none.
 */
export interface RoutingWrites {
  saveUpstream(input: SaveUpstreamInput, mode?: SaveMode, record?: RecordChange): Promise<UpstreamView>;
  createUpstream(
    input: Omit<SaveUpstreamInput, 'slug'> & { slug?: string },
    record?: RecordChange,
  ): Promise<UpstreamView>;
  /** Null when the row was deleted meanwhile. */
  recordProbe(userId: string, id: string, fold: ProbeFold): Promise<UpstreamView | null>;
  /** Null when the account has no such endpoint. */
  deleteUpstream(userId: string, slug: string, record?: RecordChange): Promise<UpstreamView | null>;
  saveAlias(input: SaveAliasInput, record?: RecordChange): Promise<AliasView>;
  deleteAlias(
    userId: string,
    token: string,
    record?: RecordChange,
  ): Promise<{ token: string; rev: number; deleted: boolean }>;
}

export function createRoutingWrites(deps: { db: AccountDb; cipher: SecretCipher; pubsub: PubSub }): RoutingWrites {
  const upstreamChanged = async <T extends UpstreamView | null>(saved: T): Promise<T> => {
    if (!saved) return saved;
    await deps.pubsub.publish(ROUTING_CHANGED_CHANNEL, saved.userId);
    // Every member's team key routes to a shared endpoint, so their tables are stale too.
    if (saved.orgId) await deps.pubsub.publish(ROUTING_CHANGED_CHANNEL, saved.orgId);
    return saved;
  };
  const aliasChanged = async (userId: string, token: string, rev: number, deleted: boolean) => {
    await deps.pubsub.publish(ROUTING_CHANGED_CHANNEL, userId);
    await deps.pubsub.publish(
      ALIASES_CHANGED_CHANNEL,
      JSON.stringify({ user_id: userId, token: `@${token}`, rev, deleted }),
    );
  };
  return {
    saveUpstream: async (input, mode, record) =>
      upstreamChanged(await saveUpstream(deps.db, deps.cipher, input, mode, record)),
    createUpstream: async (input, record) => upstreamChanged(await createUpstream(deps.db, deps.cipher, input, record)),
    recordProbe: async (userId, id, fold) => upstreamChanged(await recordProbe(deps.db, userId, id, fold)),
    deleteUpstream: async (userId, slug, record) =>
      upstreamChanged(await deleteUpstream(deps.db, userId, slug, record)),
    async saveAlias(input, record) {
      const saved = await saveAlias(deps.db, input, record);
      await aliasChanged(input.userId, saved.token, saved.rev, false);
      return saved;
    },
    async deleteAlias(userId, token, record) {
      const result = await deleteAlias(deps.db, userId, token, record);
      if (result.deleted) await aliasChanged(userId, result.token, result.rev, true);
      return result;
    },
  };
}

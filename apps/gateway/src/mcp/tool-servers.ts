import type { LocalCache, PubSub } from '@sbc/cache';
import type { EgressCaller } from '@sbc/egress';
import { MCP_SERVERS_CHANGED_CHANNEL } from '@sbc/events';
import type { GetToolServerTableResponse, McpServerService } from '@sbc/proto/sbc/account/v1/mcp_pb';
import type { RpcClientOf } from '@sbc/rpc';

/** One tool server as the edge dials it. Its headers are decrypted credentials: never logged, never rendered. */
export interface EdgeToolServer {
  /** Unique within one answer: at `/mcp` its tools are named `<slug>__<tool>`; `/mcp/{slug}` serves it alone. */
  slug: string;
  label: string;
  /** The Streamable HTTP MCP URL as saved. */
  url: string;
  /** Every header to send it: the stored ones, plus `authorization: Bearer …` when a bearer token is stored. */
  headers: Record<string, string>;
  /** What its last answered probe listed; the live `tools/list` is the truth. */
  tools: { name: string; description?: string }[];
  /** `account`: the caller's own; `team`: from its team's pool (team keys only). */
  source: 'account' | 'team';
  /** Whose egress rules a dial follows: the owner's standing (dial through `egress.connector(dialAs)`). */
  dialAs: EgressCaller;
}

export interface ToolServerDirectory {
  /**
   * The servers a credential may use before its key's `allowed_tools` narrow them: the user's own and, for a team
   * key, the team's pool. From the local cache when fresh: a gRPC round trip only the first time, and again after
   * the account service says the table changed (every edge drops it then) or the stale window ends.
   */
  serversFor(principal: { userId: string; key?: { orgId?: string } }, requestId: string): Promise<EdgeToolServer[]>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function toEdgeServer(server: GetToolServerTableResponse['servers'][number]): EdgeToolServer {
  return {
    slug: server.slug,
    label: server.label,
    url: server.url,
    headers: { ...server.headers },
    tools: server.tools.map((tool) =>
      tool.description === undefined ? { name: tool.name } : { name: tool.name, description: tool.description },
    ),
    source: server.source === 'team' ? 'team' : 'account',
    // An unknown standing dials under the stricter rules.
    dialAs: server.dialAs === 'operator' ? 'operator' : 'tenant',
  };
}

export function createToolServerDirectory(deps: {
  mcpServers: RpcClientOf<typeof McpServerService>;
  cache: LocalCache<EdgeToolServer[]>;
  pubsub: PubSub;
}): ToolServerDirectory {
  // Tables are cached per user and team context. A change names a user id or a team (`org_…`) id and drops every
  // table that user's servers or that team's pool went into.
  const keysByOwner = new Map<string, Set<string>>();
  const remember = (owner: string, cacheKey: string) => {
    let keys = keysByOwner.get(owner);
    if (!keys) keysByOwner.set(owner, (keys = new Set()));
    keys.add(cacheKey);
  };
  let unsubscribe: (() => Promise<void> | void) | undefined;

  return {
    async serversFor(principal, requestId) {
      const { userId } = principal;
      const orgId = principal.key?.orgId || undefined;
      const cacheKey = `${userId}|${orgId ?? ''}`;
      remember(userId, cacheKey);
      if (orgId) remember(orgId, cacheKey);
      const servers = await deps.cache.swr(cacheKey, async () =>
        (await deps.mcpServers.getToolServerTable({ userId, orgId }, { requestId })).servers.map(toEdgeServer),
      );
      return servers ?? [];
    },
    async start() {
      unsubscribe = await deps.pubsub.subscribe(MCP_SERVERS_CHANGED_CHANNEL, (owner) => {
        for (const key of keysByOwner.get(owner) ?? []) deps.cache.delete(key);
        keysByOwner.delete(owner);
      });
    },
    async stop() {
      await unsubscribe?.();
    },
  };
}

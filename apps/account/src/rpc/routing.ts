import type { MessageInitShape } from '@bufbuild/protobuf';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { GetRoutingTableResponseSchema } from '@sbc/proto/sbc/account/v1/account_pb';
import type { PrismaClient as AccountDb } from '../generated/prisma/client';
import { listAliases } from '../store/aliases';
import type { SecretCipher } from '../store/secrets';
import { listUpstreamsForRouting } from '../store/upstreams';

export interface RoutingRpcDeps {
  db: AccountDb;
  cipher: SecretCipher;
  logger?: Logger;
}

/**
 * GetRoutingTable: everything the edge needs to resolve a model id for one caller. The decrypted keys go
 * only to the edge, which dials with them and never shows them.
 */
export async function getRoutingTable(
  deps: RoutingRpcDeps,
  request: { userId: string; orgId?: string },
  requestId: string,
): Promise<MessageInitShape<typeof GetRoutingTableResponseSchema>> {
  if (!request.userId) throw new ApiError('invalid_request', 'user_id is required', { param: 'user_id' });
  const [upstreams, aliases] = await Promise.all([
    listUpstreamsForRouting(deps.db, deps.cipher, request.userId, request.orgId || undefined, (upstreamId, error) =>
      // Logged once here with the row id, never the ciphertext; the edge just does not see that endpoint.
      deps.logger?.error(
        { requestId, rpc: 'GetRoutingTable', upstreamId, err: error },
        'stored upstream secret does not decrypt; endpoint left out',
      ),
    ),
    listAliases(deps.db, request.userId),
  ]);
  return {
    upstreams: upstreams.map((upstream) => ({
      slug: upstream.slug,
      label: upstream.label,
      dialect: upstream.dialect,
      baseUrl: upstream.baseUrl,
      apiKey: upstream.apiKey,
      headers: upstream.headers,
      models: upstream.models,
      probedAtMs: BigInt(upstream.probedAt?.getTime() ?? 0),
      weight: upstream.weight,
      anthropicBeta: upstream.anthropicBeta ?? undefined,
    })),
    aliases: aliases.map((alias) => ({ token: `@${alias.token}`, vendor: alias.vendor, modelId: alias.modelId })),
  };
}

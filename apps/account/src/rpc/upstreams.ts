import { findBuiltInAlias } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@sbc/pagination';
import type { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import type { RpcImplementation } from '@sbc/rpc';
import { createEgressPolicy, type EgressCaller } from '@sbc/egress';
import { foldProbe } from '../probe/fold';
import { createProber, type ProbeTarget } from '../probe/probe-endpoint';
import { createRoutingWrites } from '../routing/writes';
import { aliasRevOf, listAliases, normalizeAliasToken, type AliasCustody } from '../store/aliases';
import {
  findUpstreamDial,
  listEndpointModels,
  listUpstreamPage,
  ENDPOINT_DIALECTS,
  type EndpointDialect,
  type UpstreamView,
} from '../store/upstreams';
import type { AccountServiceDeps } from './account-service';
import { recordAs } from './audit';
import { toProtoUpstream, withProbe } from './upstream-messages';

/** Connect plus the whole answer; `auto` asks both dialects at once, so a probe never takes much longer. */
const PROBE_TIMEOUT_MS = 5_000;

function dialectOf(value: string, fallback: EndpointDialect): EndpointDialect {
  if (value === '') return fallback;
  if (!(ENDPOINT_DIALECTS as readonly string[]).includes(value)) {
    throw ApiError.invalid([
      { path: 'dialect', code: 'invalid_value', message: 'dialect must be one of openai, anthropic, auto' },
    ]);
  }
  return value as EndpointDialect;
}

function custodyOf(value: string | undefined): AliasCustody | undefined {
  if (value === undefined || value === 'envelope' || value === 'device-held') return value;
  throw ApiError.invalid([
    { path: 'custody', code: 'invalid_value', message: 'custody must be envelope or device-held' },
  ]);
}

/** A policy from the wire: a message left unset is undefined (keep, or none on create); an empty one clears. */
function betaPolicyFrom(policy: { drop: string[]; map: Record<string, string> } | undefined) {
  return policy && { drop: [...policy.drop], map: { ...policy.map } };
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

function dialTarget(
  view: UpstreamView,
  apiKey: string,
  headers: Record<string, string>,
  dialAs: EgressCaller,
): ProbeTarget {
  return { baseUrl: view.baseUrl, dialect: view.dialect, apiKey, headers, dialAs };
}

/**
 * Custom endpoints and personal aliases. Endpoint writes save first and probe after, so an endpoint that is
 * down is still saved with a report saying why; every write goes through RoutingWrites, which tells the edges
 * (and, for aliases, paired devices) at once.
 */
export function createUpstreamService(deps: AccountServiceDeps): RpcImplementation<typeof UpstreamService> {
  const writes = createRoutingWrites(deps);
  const ownOrigins = deps.config?.egress.ownOrigins ?? [];
  const egress = createEgressPolicy({
    privateEgress: deps.config?.egress.private ?? 'operators',
    ownOrigins: () => ownOrigins,
  });
  const prober = createProber({ timeoutMs: PROBE_TIMEOUT_MS, egress });
  // An endpoint is dialed for its owner, whose standing decides whether loopback and private addresses are allowed.
  const dialAs = (userId: string): EgressCaller => (deps.operators.isOperator(userId) ? 'operator' : 'tenant');

  // CONTRACTS Egress: a base_url the policy refuses for its owner is refused when written, and again when dialed.
  const refuseEgress = async (baseUrl: string, userId: string) => {
    if (!URL.canParse(baseUrl)) return; // an unparsable URL is refused by the save's own checks
    const reason = await egress.refusal(baseUrl, dialAs(userId));
    if (reason) throw ApiError.invalid([{ path: 'base_url', code: 'egress_denied', message: `base_url: ${reason}` }]);
  };

  /**
   * Probes a saved endpoint and stores the fold; `kept` are the models that survive an answered probe, and
   * `sameDial` says whether what the last probe found still describes this dial.
   */
  const probeAndFold = async (
    saved: UpstreamView,
    target: ProbeTarget,
    kept: readonly string[],
    sameDial: boolean,
    signal: AbortSignal,
  ) => {
    const report = await prober.probe(target, signal);
    const fold = foldProbe(report, { ...saved, lastAnsweredIn: sameDial ? saved.probe?.dialect : undefined }, kept);
    const folded = await writes.recordProbe(saved.userId, saved.id, fold);
    if (!folded)
      throw new ApiError('not_found', 'The endpoint was deleted while it was being probed.', { param: 'slug' });
    return folded;
  };

  const findDial = async (userId: string, slug: string) => {
    const found = await findUpstreamDial(deps.db, deps.cipher, userId, slug);
    if (!found) throw new ApiError('not_found', 'No such endpoint on this account.', { param: 'slug' });
    return found;
  };

  return {
    async listUpstreams(request) {
      // The edge sends a validated limit; an unset one (0) from any other caller means the default.
      const limit = Math.min(request.limit > 0 ? request.limit : DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT);
      const page = await listUpstreamPage(deps.db, request.userId, {
        limit,
        after_id: request.afterId,
        before_id: request.beforeId,
      });
      return { upstreams: page.data.map(toProtoUpstream), hasMore: page.has_more };
    },

    async createUpstream(request, ctx) {
      const dialect = dialectOf(request.dialect, 'auto');
      await refuseEgress(request.baseUrl, request.userId);
      const headers = { ...request.headers };
      const saved = await writes.createUpstream(
        {
          userId: request.userId,
          slug: request.slug,
          label: request.label,
          baseUrl: request.baseUrl,
          dialect,
          apiKey: request.apiKey,
          headers,
          models: [...new Set(request.models)],
          weight: request.weight,
          anthropicBeta: betaPolicyFrom(request.anthropicBeta),
        },
        recordAs(ctx, request.userId),
      );
      return withProbe(
        await probeAndFold(
          saved,
          dialTarget(saved, request.apiKey, headers, dialAs(saved.userId)),
          saved.models,
          false,
          ctx.signal,
        ),
      );
    },

    async updateUpstream(request, ctx) {
      const current = await findDial(request.userId, request.slug);
      const { view } = current;
      const baseUrl = request.baseUrl ?? view.baseUrl;
      const dialect = request.dialect === undefined ? view.dialect : dialectOf(request.dialect, view.dialect);
      const apiKey = request.apiKey ?? current.apiKey;
      const headers = request.headers ? { ...request.headers.entries } : current.headers;
      const models = request.models ? [...new Set(request.models.values)] : undefined;
      const dialChanged =
        baseUrl !== view.baseUrl ||
        dialect !== view.dialect ||
        apiKey !== current.apiKey ||
        !sameRecord(headers, current.headers);
      // An endpoint saved before a stricter setting keeps its other edits; its dials are refused when they happen.
      if (baseUrl !== view.baseUrl) await refuseEgress(baseUrl, request.userId);
      const saved = await writes.saveUpstream(
        {
          userId: request.userId,
          orgId: view.orgId,
          slug: view.slug,
          label: request.label ?? view.label,
          baseUrl,
          dialect,
          apiKey: request.apiKey,
          headers: request.headers ? headers : undefined,
          models,
          modelNames: request.modelNames ? { ...request.modelNames.entries } : undefined,
          weight: request.weight,
          anthropicBeta: betaPolicyFrom(request.anthropicBeta),
        },
        'update',
        recordAs(ctx, request.userId),
      );
      if (!dialChanged) return withProbe(saved);
      // The models the old dial listed described another server; only those named in this edit are kept.
      return withProbe(
        await probeAndFold(
          saved,
          dialTarget(saved, apiKey, headers, dialAs(saved.userId)),
          models ?? [],
          false,
          ctx.signal,
        ),
      );
    },

    async deleteUpstream(request, ctx) {
      if (!(await writes.deleteUpstream(request.userId, request.slug, recordAs(ctx, request.userId)))) {
        throw new ApiError('not_found', 'No such endpoint on this account.', { param: 'slug' });
      }
      return {};
    },

    async probeUpstream(request, ctx) {
      const { view, apiKey, headers } = await findDial(request.userId, request.slug);
      return withProbe(
        await probeAndFold(view, dialTarget(view, apiKey, headers, dialAs(view.userId)), view.models, true, ctx.signal),
      );
    },

    async listAliases(request) {
      const [aliases, rev, endpointModels] = await Promise.all([
        listAliases(deps.db, request.userId),
        aliasRevOf(deps.db, request.userId),
        listEndpointModels(deps.db, request.userId),
      ]);
      return {
        aliases: aliases.map((alias) => ({
          token: `@${alias.token}`,
          vendor: alias.vendor,
          modelId: alias.modelId,
          label: alias.label,
          tier: alias.tier,
          custody: alias.custody,
          rev: BigInt(alias.rev),
        })),
        rev: BigInt(rev),
        endpointModels,
      };
    },

    async putAlias(request, ctx) {
      // Without model_id the token names the model: a built-in alias's model (re-pointing `@claude` keeps its
      // model), else the token itself (`PUT /v1/aliases/gpt-4o` aliases the model gpt-4o).
      const token = normalizeAliasToken(request.token);
      const saved = await writes.saveAlias(
        {
          userId: request.userId,
          token,
          vendor: request.vendor,
          modelId: request.modelId ?? findBuiltInAlias(token)?.model_id ?? token,
          label: request.label,
          custody: custodyOf(request.custody),
        },
        recordAs(ctx, request.userId),
      );
      return { write: { token: `@${saved.token}`, rev: BigInt(saved.rev) } };
    },

    async deleteAlias(request, ctx) {
      const result = await writes.deleteAlias(request.userId, request.token, recordAs(ctx, request.userId));
      return { write: { token: `@${result.token}`, rev: BigInt(result.rev) } };
    },
  };
}

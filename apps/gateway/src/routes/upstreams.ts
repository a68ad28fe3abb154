import { Router } from 'express';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { upstreamRoutes as specs } from '@sbc/api';
import type {
  Upstream,
  UpstreamProbe,
  UpstreamService,
  UpstreamWithProbe,
} from '@sbc/proto/sbc/account/v1/upstreams_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { mount } from '../http/mount';

export interface UpstreamRoutesDeps {
  authorize: Authorize;
  upstreams: RpcClientOf<typeof UpstreamService>;
}

/** Header values are credentials as often as not; every caller sees the names only. */
const REDACTED = '••••';

// Saving, editing and probing an endpoint wait for its probe (up to 5 s per dialect, both dialects at once)
// on top of the writes, which the default RPC deadline does not leave room for.
const PROBING_CALL_DEADLINE_MS = 15_000;

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : undefined);

function renderProbe(probe: UpstreamProbe): Record<string, unknown> {
  return {
    ok: probe.ok,
    ...(probe.modelsFound !== undefined ? { models_found: probe.modelsFound } : {}),
    ...(probe.error !== undefined ? { error: probe.error } : {}),
    ...(probe.at ? { at: iso(probe.at) } : {}),
    ...(probe.dialect ? { dialect: probe.dialect } : {}),
    ...(probe.dialectReason ? { dialect_reason: probe.dialectReason } : {}),
  };
}

/** The spec's Upstream: no API key, header values redacted. */
function renderUpstream(upstream: Upstream): Record<string, unknown> {
  return {
    id: upstream.id,
    slug: upstream.slug,
    label: upstream.label,
    base_url: upstream.baseUrl,
    dialect: upstream.dialect,
    dialect_setting: upstream.dialectSetting,
    headers: Object.fromEntries(upstream.headerNames.map((name) => [name, REDACTED])),
    models: upstream.models,
    model_names: upstream.modelNames,
    model_meta: JSON.parse(upstream.modelMetaJson || '{}') as Record<string, unknown>,
    ...(upstream.probe ? { probe: renderProbe(upstream.probe) } : {}),
    ...(upstream.probedAt ? { probed_at: iso(upstream.probedAt) } : {}),
    weight: upstream.weight,
    anthropic_beta: upstream.anthropicBeta
      ? { drop: upstream.anthropicBeta.drop, map: upstream.anthropicBeta.map }
      : null,
    created_at: iso(upstream.createdAt),
    updated_at: iso(upstream.updatedAt),
  };
}

/** A policy as the account service takes it: unset keeps (none on create), an empty one (from `null`) removes. */
function betaPolicyOf(policy: { drop?: string[]; map?: Record<string, string> } | null | undefined) {
  if (policy === undefined) return undefined;
  return { drop: policy?.drop ?? [], map: policy?.map ?? {} };
}

function renderWithProbe(result: UpstreamWithProbe | undefined): Record<string, unknown> {
  if (!result?.upstream || !result.probe) throw new Error('UpstreamService answered without the endpoint or its probe');
  return { upstream: renderUpstream(result.upstream), probe: renderProbe(result.probe) };
}

/**
 * Custom endpoints (`/v1/upstreams`) and aliases (`/v1/aliases`): the account service owns the rows and does
 * the probing; the edge validates, renders and redacts.
 */
export function upstreamRoutes(deps: UpstreamRoutesDeps): Router {
  const router = Router();

  mount(router, specs.listUpstreams, deps.authorize, async ({ principal, query, requestId }) => {
    const page = await deps.upstreams.listUpstreams(
      { userId: principal.userId, limit: query.limit, afterId: query.after_id, beforeId: query.before_id },
      { requestId },
    );
    const data = page.upstreams.map(renderUpstream);
    const ids = page.upstreams.map((upstream) => upstream.id);
    return {
      status: 200,
      body: {
        object: 'list',
        data,
        has_more: page.hasMore,
        first_id: ids[0] ?? null,
        last_id: ids.at(-1) ?? null,
        upstreams: data,
      },
    };
  });

  mount(router, specs.createUpstream, deps.authorize, async ({ principal, body, rpc }) => {
    const created = await deps.upstreams.createUpstream(
      {
        userId: principal.userId,
        label: body.label,
        baseUrl: body.base_url,
        apiKey: body.api_key,
        dialect: body.dialect,
        headers: body.headers ?? {},
        models: body.models ?? [],
        slug: body.slug,
        weight: body.weight,
        anthropicBeta: betaPolicyOf(body.anthropic_beta),
      },
      { ...rpc, deadlineMs: PROBING_CALL_DEADLINE_MS },
    );
    return { status: 201, body: renderWithProbe(created.result) };
  });

  mount(router, specs.updateUpstream, deps.authorize, async ({ principal, params, body, rpc }) => {
    const updated = await deps.upstreams.updateUpstream(
      {
        userId: principal.userId,
        slug: params.slug,
        label: body.label,
        baseUrl: body.base_url,
        dialect: body.dialect,
        apiKey: body.api_key,
        headers: body.headers ? { entries: body.headers } : undefined,
        models: body.models ? { values: body.models } : undefined,
        modelNames: body.model_names ? { entries: body.model_names } : undefined,
        weight: body.weight,
        anthropicBeta: betaPolicyOf(body.anthropic_beta),
      },
      { ...rpc, deadlineMs: PROBING_CALL_DEADLINE_MS },
    );
    return { status: 200, body: renderWithProbe(updated.result) };
  });

  mount(router, specs.deleteUpstream, deps.authorize, async ({ principal, params, rpc }) => {
    await deps.upstreams.deleteUpstream({ userId: principal.userId, slug: params.slug }, rpc);
    return { status: 204 };
  });

  mount(router, specs.probeUpstream, deps.authorize, async ({ principal, params, requestId }) => {
    const probed = await deps.upstreams.probeUpstream(
      { userId: principal.userId, slug: params.slug },
      { requestId, deadlineMs: PROBING_CALL_DEADLINE_MS },
    );
    return { status: 200, body: renderWithProbe(probed.result) };
  });

  return router;
}

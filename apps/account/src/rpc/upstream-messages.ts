import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type {
  UpstreamProbeSchema,
  UpstreamSchema,
  UpstreamWithProbeSchema,
} from '@sbc/proto/sbc/account/v1/upstreams_pb';
import { routingDialect, type UpstreamProbe, type UpstreamView } from '../store/upstreams';

function toProtoProbe(probe: UpstreamProbe): MessageInitShape<typeof UpstreamProbeSchema> {
  return {
    ok: probe.ok,
    modelsFound: probe.models_found,
    error: probe.error,
    at: probe.at ? timestampFromDate(new Date(probe.at)) : undefined,
    dialect: probe.dialect,
    dialectReason: probe.dialect_reason,
  };
}

/** An endpoint as the account surface shows it: `dialect` is what the edge speaks to it, secrets stay behind. */
export function toProtoUpstream(view: UpstreamView): MessageInitShape<typeof UpstreamSchema> {
  return {
    id: view.id,
    slug: view.slug,
    label: view.label,
    baseUrl: view.baseUrl,
    dialect: routingDialect(view.dialect, view.probe, view.baseUrl),
    dialectSetting: view.dialect,
    headerNames: view.headerNames,
    models: view.models,
    modelNames: view.modelNames,
    modelMetaJson: JSON.stringify(view.modelMeta),
    probe: view.probe ? toProtoProbe(view.probe) : undefined,
    probedAt: view.probedAt ? timestampFromDate(view.probedAt) : undefined,
    weight: view.weight,
    anthropicBeta: view.anthropicBeta ?? undefined,
    createdAt: timestampFromDate(view.createdAt),
    updatedAt: timestampFromDate(view.updatedAt),
  };
}

// UpstreamWithProbe needs a report even for an endpoint saved without one (seeded rows, never probed).
const NEVER_PROBED: UpstreamProbe = { ok: false, error: 'not probed yet' };

/** The spec's UpstreamWithProbe: the endpoint and its last probe report. */
export function withProbe(view: UpstreamView): { result: MessageInitShape<typeof UpstreamWithProbeSchema> } {
  return { result: { upstream: toProtoUpstream(view), probe: toProtoProbe(view.probe ?? NEVER_PROBED) } };
}

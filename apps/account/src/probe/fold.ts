import type { ProbeFold, UpstreamProbe } from '../store/upstreams';
import type { UpstreamDialect } from '@sbc/dialects';
import type { ProbeReport } from './probe-endpoint';

/**
 * The spec's UpstreamProbe for a report, with the dialect that answered. A failed probe keeps the dialect the
 * same dial last answered in: an `auto` endpoint that is briefly down must not be dialed in a guessed one.
 */
function probeOfReport(report: ProbeReport, lastAnsweredIn?: UpstreamDialect): UpstreamProbe {
  if (report.ok) {
    const probe: UpstreamProbe = {
      ok: true,
      models_found: report.models.length,
      dialect: report.dialect,
      at: report.at.toISOString(),
    };
    if (report.dialectReason !== undefined) probe.dialect_reason = report.dialectReason;
    return probe;
  }
  return {
    ok: false,
    error: report.error,
    ...(lastAnsweredIn ? { dialect: lastAnsweredIn } : {}),
    at: report.at.toISOString(),
  };
}

/**
 * What a probe writes into the row. An answered probe folds in: `models` becomes what the endpoint lists,
 * followed by every model in `kept` it did not list (models the caller named by hand stay routable), and the
 * endpoint's display names fill `model_names` where the caller set none. A failed probe changes only the
 * report, so an endpoint that is briefly down keeps routing what it listed, in the dialect it answered in.
 */
export function foldProbe(
  report: ProbeReport,
  current: { models: string[]; modelNames: Record<string, string>; lastAnsweredIn?: UpstreamDialect },
  kept: readonly string[],
): ProbeFold {
  const probe = probeOfReport(report, current.lastAnsweredIn);
  if (!report.ok) return { probe, models: current.models, modelNames: current.modelNames };
  const models = [...new Set([...report.models, ...kept])];
  const found = Object.fromEntries(Object.entries(report.modelNames).filter(([id]) => models.includes(id)));
  return { probe, models, modelNames: { ...found, ...current.modelNames } };
}

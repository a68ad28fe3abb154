import type { UpstreamProbe } from '../../api/types';
import { ProbeReport } from '../../ui/probed-resource';

/** A probe's outcome in words: the dialect and models found, or why it failed. */
export function ProbeResult({ probe, live }: { probe: UpstreamProbe | undefined; live?: boolean }) {
  return (
    <ProbeReport
      probe={probe}
      live={live}
      found={`Answered in the ${probe?.dialect ?? 'unknown'} dialect; ${probe?.models_found ?? 0} models found`}
    >
      {probe?.dialect_reason ? <span className="hint"> — {probe.dialect_reason}</span> : null}
    </ProbeReport>
  );
}

import type { UpstreamProbe } from '../../api/types';
import { dateTime } from '../../ui/format';

/** A probe's outcome in words: the dialect and models found, or why it failed. */
export function ProbeResult({ probe, live }: { probe: UpstreamProbe | undefined; live?: boolean }) {
  if (!probe) return <span>Not probed yet</span>;
  const text = probe.ok
    ? `Answered in the ${probe.dialect ?? 'unknown'} dialect; ${probe.models_found ?? 0} models found`
    : `Probe failed: ${probe.error ?? 'no reason given'}`;
  return (
    <span role={live ? 'status' : undefined} className={probe.ok ? 'ok' : 'bad'}>
      {text}
      {probe.at ? ` (${dateTime(probe.at)})` : ''}
      {probe.dialect_reason ? <span className="hint"> — {probe.dialect_reason}</span> : null}
    </span>
  );
}

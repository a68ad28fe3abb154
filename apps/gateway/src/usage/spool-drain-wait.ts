import type { GatewayConfig } from '../config';

const POLL_MS = 1_000;

/** The value of an unlabelled series in Prometheus text, or undefined when the text has none. */
function seriesValue(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * `gateway spool-drain-wait [--max-ms N]`, the pod's preStop: polls the running edge's own metrics (on loopback)
 * until its spool holds no event (`sbc_usage_events_spooled` 0) or `--max-ms` (default 60 s) passed, so a pod
 * stopped by a scale-in or a drain hands its spool to the broker first when the broker is there. Exits 0 once
 * drained (or when the edge spools nothing: no Kafka), 1 when time ran out: the kubelet then records a
 * FailedPreStopHook event, and the spool left behind is adopted by a live edge (libs/bus spool-root.ts).
 */
export async function waitForSpoolToDrain(config: GatewayConfig, args: string[]): Promise<number> {
  const at = args.indexOf('--max-ms');
  const maxMs = at >= 0 ? Number(args[at + 1]) : 60_000;
  if (!Number.isFinite(maxMs) || maxMs < 0) {
    process.stderr.write('spool-drain-wait: --max-ms takes a number of milliseconds\n');
    return 2;
  }
  const port = config.metrics.port ?? config.port;
  const url = `http://127.0.0.1:${port}/metrics`;
  const deadline = Date.now() + maxMs;
  let spooled: number | undefined;
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(POLL_MS) });
      spooled = seriesValue(await response.text(), 'sbc_usage_events_spooled') ?? 0;
      if (spooled === 0) return 0;
    } catch {
      // Not answering (starting, or already gone): nothing to wait for here.
      return 0;
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  process.stderr.write(
    `spool-drain-wait: ${spooled} usage events still spooled after ${maxMs} ms; a live edge adopts them\n`,
  );
  return 1;
}

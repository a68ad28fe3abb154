import type { ProducerStats } from '@sbc/bus';
import { ApiError } from '@sbc/errors';

/** How often the gate looks at the spool: a call reads one boolean, never the producer's figures. */
const LOOK_EVERY_MS = 250;
/** What a shed call is told to wait: the spool drains at the broker's pace once it is back. */
const RETRY_AFTER_S = 30;

export interface UsageGate {
  /** The 503 a billable call gets now, or undefined when its usage can be recorded. */
  refusal(): ApiError | undefined;
  /** Billable calls refused since start. */
  shed(): number;
  stop(): void;
}

/**
 * Whether the edge can record the usage of a billable call. While the broker acks, always (the spool is not in
 * play). While events spool, only while the spool is writable and under `shedAt` of its byte bound: past it, a
 * call that would be billed is answered 503 `usage_unrecordable` in its dialect, with `retry-after`, rather than
 * served unbilled; the calls still running keep the headroom to record theirs. Calls that bill nothing (own
 * endpoints, response-cache hits) are never shed, and the edge stays ready throughout: an outage of the broker
 * takes every edge's spool the same way, and unready edges would take the whole API down with it. MCP tool calls
 * are shed as billable calls are (tool-gateway.ts): metering them is what the MCP gateway is for.
 */
export function createUsageGate(stats: (() => ProducerStats) | undefined, shedAt: number): UsageGate {
  let refusing = false;
  let shed = 0;
  const look = () => {
    const spool = stats?.().spool;
    refusing = Boolean(spool?.spooling && (!spool.writable || spool.bytes >= shedAt * spool.maxBytes));
  };
  const timer = stats ? setInterval(look, LOOK_EVERY_MS) : undefined;
  timer?.unref();
  return {
    refusal() {
      if (!refusing) return undefined;
      shed++;
      return new ApiError(
        'usage_unrecordable',
        'This gateway cannot record usage right now (its event bus is unreachable and its spool is nearly full), so ' +
          `it takes no billable call; retry after ${RETRY_AFTER_S} s.`,
        { headers: { 'retry-after': String(RETRY_AFTER_S) } },
      );
    },
    shed: () => shed,
    stop: () => clearInterval(timer),
  };
}

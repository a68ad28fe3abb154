import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * One Prometheus registry per service: the process's own figures (CPU, memory, event-loop lag, GC) plus
 * whatever the service registers, every series labelled with the service name. Services that share one
 * process (embedded mode) each keep their own registry and answer /metrics on their own port.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Answers a scrape in the Prometheus text format. */
export async function writeMetrics(registry: Registry, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const body = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
    res.end(body);
  } catch (error) {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`collecting metrics failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

/** Latency buckets in seconds, from sub-millisecond edge overhead to multi-minute streams. */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

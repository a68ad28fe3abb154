import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, createMetricsRegistry, writeMetrics } from './index';

describe('a service metrics registry', () => {
  it(
    'serves its own series and the process figures, labelled ' + 'with the service, in the Prometheus text format',
    async () => {
      const registry = createMetricsRegistry('ledger');
      const applied = new Counter({
        name: 'sbc_test_events_total',
        help: 'Events applied.',
        labelNames: ['outcome'],
        registers: [registry],
      });
      applied.inc({ outcome: 'applied' }, 3);
      const server = createServer((req, res) => void writeMetrics(registry, req, res));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
        const text = await res.text();
        expect(text).toContain('sbc_test_events_total{outcome="applied",service="ledger"} 3');
        expect(text).toMatch(/^process_resident_memory_bytes\{service="ledger"\} \d+/m);
        expect(text).toMatch(/^nodejs_eventloop_lag_seconds\{service="ledger"\}/m);
      } finally {
        server.close();
      }
    },
  );

  it('keeps two services in one process apart', async () => {
    const first = createMetricsRegistry('runs');
    const second = createMetricsRegistry('x-builds');
    new Counter({ name: 'sbc_test_only_runs_total', help: 'x', registers: [first] }).inc();
    expect(await first.metrics()).toContain('sbc_test_only_runs_total{service="runs"} 1');
    expect(await second.metrics()).not.toContain('sbc_test_only_runs_total');
  });
});

import type { ProducerStats } from '@sbc/bus';
import { Gauge, type Registry } from '@sbc/metrics';

/**
 * The spool's figures for Prometheus and the alert rules (deploy/k8s/base/alerts.yaml): its bytes against its
 * bound, whether it takes writes, spools adopted from edges that were gone and spools that look abandoned, and
 * the billable calls shed. `sbc_usage_events_spooled` and `_pending` are the edge's own (edge-metrics.ts).
 */
export function registerSpoolMetrics(registry: Registry, stats: () => ProducerStats, shed: () => number): void {
  const registers = [registry];
  const gauge = (name: string, help: string, read: (spool: NonNullable<ProducerStats['spool']>) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const spool = stats().spool;
        if (spool) this.set(read(spool));
      },
    });
  gauge('sbc_usage_spool_bytes', "Bytes of this edge's own usage spool on disk.", (spool) => spool.bytes);
  gauge(
    'sbc_usage_spool_max_bytes',
    'The bound on sbc_usage_spool_bytes (USAGE_SPOOL_MAX_BYTES).',
    (spool) => spool.maxBytes,
  );
  gauge(
    'sbc_usage_spool_writable',
    '1 while the spool takes writes; 0 after a failed write until repaired, or while the edge lost its lease.',
    (spool) => (spool.writable ? 1 : 0),
  );
  gauge(
    'sbc_usage_spool_active',
    '1 while usage events go to the spool (the broker does not ack within USAGE_SPOOL_AFTER_MS).',
    (spool) => (spool.spooling ? 1 : 0),
  );
  gauge(
    'sbc_usage_spool_adoptions',
    'Spools of edges that were gone, adopted and sent to the broker by this edge since it started.',
    (spool) => spool.adoptions,
  );
  gauge(
    'sbc_usage_spool_orphans',
    'Spools of other edges that look abandoned (lease not moving) or that this edge adopted and not yet sent.',
    (spool) => spool.orphans,
  );
  new Gauge({
    name: 'sbc_usage_calls_shed',
    help: 'Billable model calls refused 503 usage_unrecordable since start (spooling, and the spool nearly full).',
    registers,
    collect() {
      this.set(shed());
    },
  });
}

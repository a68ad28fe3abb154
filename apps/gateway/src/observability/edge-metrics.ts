import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProducerStats } from '@sbc/bus';
import { Counter, Gauge, HotPathCounter, HotPathHistogram, LATENCY_BUCKETS_S, type Registry } from '@sbc/metrics';
import { metricLabelOfKey } from '../routing/attempt-rules';
import type { Target } from '../routing/targets';
import type { QueueObserver } from '../upstream/pools';
import type { UsageFields } from '../usage/usage-events';

/** What the edge's metrics read from its upstream client: calls queued and in flight, and queue events. */
export interface UpstreamQueueSource {
  stats(): { queued: number; inFlight: number };
  observe(observer: QueueObserver): void;
}

/** Queue waits are short when all is well and reach seconds only when the pool is the bottleneck. */
const QUEUE_WAIT_BUCKETS_S = [0.001, 0.005, 0.025, 0.1, 0.5, 2, 10];

/** The path template Express matched for a request (low cardinality, unlike the URL), once it has routed it. */
export function routeTemplateOf(req: IncomingMessage): string | undefined {
  const path = (req as IncomingMessage & { route?: { path?: unknown } }).route?.path;
  return typeof path === 'string' ? path : undefined;
}

/**
 * The edge's Prometheus series. Requests are counted once each when their response closes (finished or
 * abandoned); model calls are observed from the usage event every call emits exactly once, so upstream
 * latency, time to first token and upstream errors cost the hot path nothing beyond that event.
 *
 * Upstream labels stay bounded: house engines and service-held vendors by their configured label, every
 * caller's own endpoint as `byo` (slugs are per account and would explode the series count).
 */
export function createEdgeMetrics(
  registry: Registry,
  usage: { producerStats?: () => ProducerStats; dropped: () => number },
  upstream?: UpstreamQueueSource,
  /** The routing policy's cooldowns, read at each scrape. */
  cooldowns?: { cooling(): Array<{ key: string; untilMs: number }> },
) {
  const registers = [registry];
  // The series every request or model call updates are hot-path metrics (one Map lookup an observation);
  // the rest are prom-client's own.
  const requests = new HotPathCounter({
    name: 'sbc_http_requests_total',
    help: 'Requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers,
  });
  const duration = new HotPathHistogram({
    name: 'sbc_http_request_duration_seconds',
    help: 'Time from a request arriving to its response closing (the whole stream for streamed calls).',
    labelNames: ['route', 'dialect'],
    buckets: LATENCY_BUCKETS_S,
    registers,
  });
  let inFlight = 0;
  new Gauge({
    name: 'sbc_http_requests_in_flight',
    help: 'Requests being answered now (streams count until they end); the autoscaler reads it.',
    registers,
    collect() {
      this.set(inFlight);
    },
  });
  const modelCalls = new HotPathCounter({
    name: 'sbc_model_calls_total',
    help: 'Model calls, by caller dialect, upstream and status (499: the caller hung up).',
    labelNames: ['dialect', 'upstream', 'status'],
    registers,
  });
  const upstreamLatency = new HotPathHistogram({
    name: 'sbc_upstream_latency_seconds',
    help: 'Whole model calls as the edge saw them, by upstream.',
    labelNames: ['upstream'],
    buckets: LATENCY_BUCKETS_S,
    registers,
  });
  const timeToFirstToken = new HotPathHistogram({
    name: 'sbc_time_to_first_token_seconds',
    help: 'From the call arriving to the first output token reaching the caller, by upstream and caller dialect.',
    labelNames: ['upstream', 'dialect'],
    buckets: LATENCY_BUCKETS_S,
    registers,
  });
  const upstreamErrors = new HotPathCounter({
    name: 'sbc_upstream_errors_total',
    help: 'Model calls that ended in an error status from or about an upstream.',
    labelNames: ['upstream', 'status'],
    registers,
  });
  const rateLimited = new Counter({
    name: 'sbc_rate_limit_refusals_total',
    help: 'Requests refused 429 rate_limited by the per-key bucket.',
    registers,
  });
  new Gauge({
    name: 'sbc_usage_events_pending',
    help: 'Usage events handed to the bus and not yet acknowledged by it (lost if the process died now).',
    registers,
    collect() {
      this.set(usage.producerStats?.().pending ?? 0);
    },
  });
  new Gauge({
    name: 'sbc_usage_events_spooled',
    help: 'Usage events on disk in the spool, not yet acknowledged by Kafka (kept across a restart of the edge).',
    registers,
    collect() {
      this.set(usage.producerStats?.().spooled ?? 0);
    },
  });
  new Gauge({
    name: 'sbc_usage_events_dropped',
    help: 'Usage events that could not be queued since start (bus buffer full, or no bus configured).',
    registers,
    collect() {
      this.set(usage.dropped());
    },
  });

  if (upstream) {
    new Gauge({
      name: 'sbc_upstream_queued_calls',
      help: 'Model calls waiting for an upstream connection now (every pool full for their origin).',
      registers,
      collect() {
        this.set(upstream.stats().queued);
      },
    });
    new Gauge({
      name: 'sbc_upstream_calls_in_flight',
      help: 'Model calls sent upstream and not finished (streams count until they end).',
      registers,
      collect() {
        this.set(upstream.stats().inFlight);
      },
    });
    const queueWait = new HotPathHistogram({
      name: 'sbc_upstream_queue_wait_seconds',
      help: 'Time a model call waited for an upstream connection (connecting included).',
      buckets: QUEUE_WAIT_BUCKETS_S,
      registers,
    });
    const overloaded = new Counter({
      name: 'sbc_upstream_overload_refusals_total',
      help: 'Model calls answered overloaded (529 or 503) because their origin had no connection and no queue room.',
      registers,
    });
    upstream.observe({ waited: (seconds) => queueWait.observe({}, seconds), refused: () => overloaded.inc() });
  }

  const attempts = new HotPathCounter({
    name: 'sbc_upstream_attempts_total',
    help:
      'Upstream attempts of model calls, by target (house engine, provider deployment, or `byo`) and outcome: ok, ' +
      'failed (counts toward a cooldown), refused (another 4xx, the answer), overloaded (the edge had no connection).',
    labelNames: ['target', 'outcome'],
    registers,
  });
  if (cooldowns) {
    new Gauge({
      name: 'sbc_upstream_targets_cooling',
      help: 'Targets skipped now because they are cooling down after failures, by target (all own endpoints as `byo`).',
      labelNames: ['target'],
      registers,
      collect() {
        this.reset();
        for (const { key } of cooldowns.cooling()) this.inc({ target: metricLabelOfKey(key) });
      },
    });
  }

  const betaRefusals = new Counter({
    name: 'sbc_anthropic_beta_refusals_total',
    help:
      'anthropic-beta values an Anthropic-dialect target refused with a 400, by target: the call was re-sent at once ' +
      "without them, and they are left out of that target's calls on this edge for the next hour.",
    labelNames: ['target'],
    registers,
  });
  const betasLeftOut = new Counter({
    name: 'sbc_anthropic_beta_left_out_total',
    help: 'anthropic-beta values left out of calls up front because their target refused them lately, by target.',
    labelNames: ['target'],
    registers,
  });

  function upstreamLabel(fields: UsageFields): string {
    if (fields.isByok || fields.upstream.startsWith('byo:')) return 'byo';
    return fields.provider || fields.upstream || 'none';
  }

  return {
    /** Counts a request from its arrival until its response closes. */
    track(req: IncomingMessage, res: ServerResponse, dialect: string | undefined, fixedRoute?: string): void {
      const startedAt = performance.now();
      inFlight += 1;
      res.once('close', () => {
        inFlight -= 1;
        const route = fixedRoute ?? routeTemplateOf(req) ?? 'unmatched';
        requests.inc({ route, method: req.method ?? 'GET', status: String(res.statusCode) });
        duration.observe({ route, dialect: dialect ?? '' }, (performance.now() - startedAt) / 1000);
      });
    },
    /** One model call, from the usage event it emitted. */
    observeCall(fields: UsageFields): void {
      const upstream = upstreamLabel(fields);
      const status = String(fields.status);
      modelCalls.inc({ dialect: fields.dialectIn, upstream, status });
      if (fields.provider) {
        upstreamLatency.observe({ upstream }, Number(fields.latencyMs) / 1000);
        if (fields.ttftMs > 0n)
          timeToFirstToken.observe({ upstream, dialect: fields.dialectIn }, Number(fields.ttftMs) / 1000);
      }
      if (fields.status >= 500 || (fields.status >= 400 && fields.status !== 499 && fields.provider !== ''))
        upstreamErrors.inc({ upstream, status });
    },
    rateLimited(): void {
      rateLimited.inc();
    },
    routeAttempt(target: Target, outcome: string): void {
      attempts.inc({ target: metricLabelOfKey(target.healthKey), outcome });
    },
    /** `count` anthropic-beta values a target refused (`refused`), or that were left out for it (`left_out`). */
    betaValues(target: { healthKey: string }, kind: 'refused' | 'left_out', count: number): void {
      (kind === 'refused' ? betaRefusals : betasLeftOut).inc({ target: metricLabelOfKey(target.healthKey) }, count);
    },
  };
}

export type EdgeMetrics = ReturnType<typeof createEdgeMetrics>;

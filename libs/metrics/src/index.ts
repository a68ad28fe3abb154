export { HotPathCounter, HotPathHistogram } from './hot-path';
export {
  Counter,
  createMetricsRegistry,
  Gauge,
  Histogram,
  LATENCY_BUCKETS_S,
  Registry,
  writeMetrics,
} from './registry';

export {
  extractContext,
  injectContext,
  inSpan,
  SpanKind,
  SpanStatusCode,
  startSpan,
  startTracing,
  startTracingFromEnv,
  tracingEnabled,
  withContext,
  type Span,
  type Tracing,
} from './tracing';

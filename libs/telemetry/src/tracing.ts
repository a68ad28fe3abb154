import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

export { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';

const TRACER = 'sbc';
let enabled = false;

export interface Tracing {
  /** Sends the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * Registers the process-wide tracer: W3C trace context propagation and spans exported over OTLP/HTTP (the
 * exporter reads OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and their headers), or to
 * the given exporter (tests). Until this runs every span call below is a no-op, so untraced processes pay
 * nothing on their hot paths.
 */
export function startTracing(options: { service: string; exporter?: SpanExporter }): Tracing {
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.service }),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  enabled = true;
  return {
    async shutdown() {
      enabled = false;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** Starts tracing when the environment names an OTLP endpoint; otherwise leaves tracing off. */
export function startTracingFromEnv(service: string, env: Record<string, string | undefined>): Tracing | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  return startTracing({ service: env.OTEL_SERVICE_NAME || service });
}

export function tracingEnabled(): boolean {
  return enabled;
}

type Carrier = Record<string, string | string[] | undefined>;
const headerGetter: TextMapGetter<Carrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};
const headerSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The trace context a caller sent (HTTP headers or gRPC metadata as a plain map). */
export function extractContext(carrier: Carrier): Context {
  return propagation.extract(context.active(), carrier, headerGetter);
}

/** Adds the current trace context (`traceparent`, `tracestate`) to outgoing headers. */
export function injectContext(headers: Record<string, string>): Record<string, string> {
  propagation.inject(context.active(), headers, headerSetter);
  return headers;
}

/** Runs `work` inside a new span, child of `parent` (default: the active context), and ends it with the outcome. */
export async function inSpan<T>(
  name: string,
  kind: SpanKind,
  parent: Context | undefined,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer(TRACER);
  return tracer.startActiveSpan(name, { kind }, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Starts a span that the caller ends (for work whose end is an event, like a response closing). */
export function startSpan(name: string, kind: SpanKind, parent: Context): { span: Span; context: Context } {
  const span = trace.getTracer(TRACER).startSpan(name, { kind }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** The active context (a new span's parent by default). */
export function activeContext(): Context {
  return context.active();
}

/** The span of the active context while tracing is on (undefined otherwise, at the cost of one check). */
export function activeSpan(): Span | undefined {
  return enabled ? trace.getActiveSpan() : undefined;
}

/** Runs `fn` with `ctx` as the active context. */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

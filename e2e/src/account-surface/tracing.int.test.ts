import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind, startTracing, type Tracing } from '@sbc/telemetry';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

// A caller's trace continues through the edge, its gRPC calls to the services and its call to the upstream.
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

describe('OpenTelemetry traces', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    tracing = startTracing({ service: 'embedded-test', exporter });
    stack = await startStack({ label: 'tracing' });
  });
  afterAll(async () => {
    await stack?.stop();
    await tracing?.shutdown();
  });

  const spansOf = (traceId: string) =>
    exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  it('a model call is a server span under the caller span, its GenAI span and the upstream call below', async () => {
    const res = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER_KEY}`, 'content-type': 'application/json', traceparent: TRACEPARENT },
      body: JSON.stringify({ model: 'house', messages: [{ role: 'user', content: 'trace me' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const spans = spansOf(TRACE_ID);
    const server = spans.find((span) => span.kind === SpanKind.SERVER && span.name === 'POST /v1/chat/completions');
    expect(server).toBeDefined();
    expect(parentOf(server!)).toBe(CALLER_SPAN);
    expect(server!.attributes['http.response.status_code']).toBe(200);
    const chat = spans.find((span) => span.kind === SpanKind.CLIENT && span.name === 'chat house');
    expect(parentOf(chat!)).toBe(server!.spanContext().spanId);
    const upstream = spans.find((span) => span.kind === SpanKind.CLIENT && span.name === 'POST /v1/chat/completions');
    expect(upstream).toBeDefined();
    expect(parentOf(upstream!)).toBe(chat!.spanContext().spanId);
    expect(upstream!.attributes['http.response.status_code']).toBe(200);
  });

  it(
    'a REST call names its span by route template, and ' + 'its gRPC call to the account service joins the trace',
    async () => {
      const traceId = 'aaf92f3577b34da6a3ce929d0e0e4736';
      const key = await stack.seedKey();
      const res = await fetch(`${stack.edge.url}/v1/keys/${key.id}`, {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${OWNER_KEY}`,
          'content-type': 'application/json',
          traceparent: `00-${traceId}-${CALLER_SPAN}-01`,
        },
        body: JSON.stringify({ name: 'traced' }),
      });
      expect(res.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const spans = spansOf(traceId);
      const server = spans.find((span) => span.kind === SpanKind.SERVER && span.name === 'PATCH /v1/keys/:id');
      expect(server).toBeDefined();
      expect(parentOf(server!)).toBe(CALLER_SPAN);
      const rpcClient = spans.find(
        (span) => span.kind === SpanKind.CLIENT && span.name === '/sbc.account.v1.AccountService/UpdateKey',
      );
      const rpcServer = spans.find(
        (span) => span.kind === SpanKind.SERVER && span.name === '/sbc.account.v1.AccountService/UpdateKey',
      );
      expect(parentOf(rpcClient!)).toBe(server!.spanContext().spanId);
      expect(parentOf(rpcServer!)).toBe(rpcClient!.spanContext().spanId);
    },
  );
});

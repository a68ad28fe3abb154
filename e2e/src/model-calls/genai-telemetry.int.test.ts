import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { startTracing, type Tracing } from '@sbc/telemetry';
import { closedPortUrl, TEXT_PROMPT, TEXT_REPLY, within } from '../support/model-calls.harness';
import { anthropicFor, openAiFor, startStack, type AccountSurfaceStack } from '../support/stack';

/**
 * The OpenTelemetry GenAI semantic conventions on model calls, as an operator's collector receives them: the
 * edge exports over OTLP/HTTP (JSON) to a receiver this test runs, and the calls are made with the official
 * SDKs. `house` is served by an engine nobody listens on, then by the sim, so a call makes two attempts.
 */
const ARTIFACTS = path.resolve(__dirname, '../../../dist/test-artifacts/telemetry');
const SECRET_KEY = 'sk-proj-abcdefghijklmnopqrstuvwx0123456789';
const GATEWAY_KEY = 'sbc_live_0123456789abcdefghijklmnop';

type Attributes = Record<string, unknown>;
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Attributes;
  events: Array<{ name: string; attributes: Attributes }>;
  status: { code?: number };
}

/** OTLP/JSON `AnyValue` as a plain value. */
function valueOf(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('arrayValue' in value)
    return ((value.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: Array<{ key: string; value: Record<string, unknown> }> = []): Attributes {
  return Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));
}

/** An OTLP/HTTP trace receiver: the spans every export request carried, flattened. */
async function startReceiver(): Promise<{ url: string; spans: ExportedSpan[]; server: Server }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as any;
      for (const resource of body.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              ...span,
              attributes: attributesOf(span.attributes),
              events: (span.events ?? []).map((event: any) => ({
                name: event.name,
                attributes: attributesOf(event.attributes),
              })),
            });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans, server };
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

describe('GenAI telemetry', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tracing: Tracing;
  let stack: AccountSurfaceStack;
  beforeAll(async () => {
    receiver = await startReceiver();
    tracing = startTracing({ service: 'gateway', exporter: new OTLPTraceExporter({ url: receiver.url }) });
    const down = await closedPortUrl();
    stack = await startStack({
      label: 'genai_telemetry',
      house: (simUrl) => ({
        house: [
          { dialect: 'openai', base_url: down, model: 'sim-large', label: 'down' },
          { dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large', label: 'sim' },
        ],
        'house-omni': [{ dialect: 'anthropic', base_url: simUrl, model: 'sim-large', label: 'sim' }],
        'house-fast': [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-error-503', label: 'failing' }],
      }),
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await tracing?.shutdown();
    await new Promise((resolve) => receiver?.server.close(resolve));
  });

  /** The first span named `name` exported after the first `since` (calls run one at a time), once it is. */
  async function exported(since: number, name: string): Promise<ExportedSpan> {
    const find = () => receiver.spans.slice(since).find((span) => span.name === name);
    await within(5_000, () => find() !== undefined);
    const span = find();
    if (!span) throw new Error(`no span "${name}" exported: ${receiver.spans.slice(since).map((s) => s.name)}`);
    return span;
  }

  const CALLER_SPAN = '00f067aa0ba902b7';

  it('a chat call is a span with the GenAI attributes and its routing attempts as events, no content', async () => {
    const traceId = '6e0c63257de34c92bf9efcd03927272e';
    const since = receiver.spans.length;
    const completion = await stack.openai.chat.completions.create(
      { model: 'house', messages: [{ role: 'user', content: TEXT_PROMPT }] },
      { headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` } },
    );
    expect(completion.choices[0]!.message.content).toBe(TEXT_REPLY);

    const span = await exported(since, 'chat house');
    expect(span.traceId).toBe(traceId);
    expect(span.kind).toBe(SPAN_KIND_CLIENT);
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'house',
      'gen_ai.response.model': 'sim-large',
      'gen_ai.usage.input_tokens': completion.usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': completion.usage!.completion_tokens,
      'gen_ai.response.finish_reasons': ['stop'],
      'sbc.served_by': 'house',
      'sbc.route.attempts': 2,
    });
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    expect(span.events).toEqual([
      {
        name: 'sbc.route.attempt',
        attributes: {
          'sbc.route.target': 'house',
          'sbc.route.engine': 'down',
          'sbc.route.outcome': 'failed',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'sim-large',
          'error.type': '502',
        },
      },
      {
        name: 'sbc.route.attempt',
        attributes: {
          'sbc.route.target': 'house',
          'sbc.route.engine': 'sim',
          'sbc.route.outcome': 'ok',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'sim-large',
        },
      },
    ]);
    // Content only when the operator turns it on.
    expect(Object.keys(span.attributes).filter((key) => key.includes('messages'))).toEqual([]);
    // Under the edge's server span, above the upstream HTTP calls.
    const serverSpan = () =>
      receiver.spans.find(
        (s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER && s.name === 'POST /v1/chat/completions',
      );
    await within(5_000, () => serverSpan() !== undefined);
    expect(serverSpan()?.parentSpanId).toBe(CALLER_SPAN);
    expect(span.parentSpanId).toBe(serverSpan()!.spanId);
    // One HTTP call per attempt.
    const upstream = receiver.spans.filter((s) => s.traceId === traceId && s.parentSpanId === span.spanId);
    expect(upstream.map((s) => [s.name, s.kind])).toEqual([
      ['POST /v1/chat/completions', SPAN_KIND_CLIENT],
      ['POST /v1/chat/completions', SPAN_KIND_CLIENT],
    ]);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(path.join(ARTIFACTS, 'genai-chat-span.json'), `${JSON.stringify(span, null, 2)}\n`);
  });

  it('a streamed Messages call names the Anthropic provider and its stop reason', async () => {
    const since = receiver.spans.length;
    const stream = stack.anthropic.messages.stream({
      model: 'house-omni',
      max_tokens: 200,
      messages: [{ role: 'user', content: TEXT_PROMPT }],
    });
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe('end_turn');

    const span = await exported(since, 'chat house-omni');
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'house-omni',
      'gen_ai.request.stream': true,
      'gen_ai.response.model': 'sim-large',
      'gen_ai.usage.input_tokens': message.usage.input_tokens,
      'gen_ai.usage.output_tokens': message.usage.output_tokens,
      'gen_ai.response.finish_reasons': ['end_turn'],
    });
    expect(span.events.map((event) => event.attributes['sbc.route.outcome'])).toEqual(['ok']);
  });

  it('a Responses call is a chat operation too', async () => {
    const since = receiver.spans.length;
    const response = await stack.openai.responses.create({ model: 'house-omni', input: TEXT_PROMPT });
    expect(response.output_text).toBe(TEXT_REPLY);
    const span = await exported(since, 'chat house-omni');
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.usage.input_tokens': response.usage!.input_tokens,
      'gen_ai.usage.output_tokens': response.usage!.output_tokens,
      'gen_ai.response.finish_reasons': ['end_turn'],
    });
  });

  it('a call no target could serve is an error span, its attempts events', async () => {
    const since = receiver.spans.length;
    const failed = await stack.openai.chat.completions
      .create({ model: 'house-fast', messages: [{ role: 'user', content: TEXT_PROMPT }] })
      .then(
        () => undefined,
        (error: { status?: number }) => error,
      );
    expect(failed?.status).toBe(503);

    const span = await exported(since, 'chat house-fast');
    expect(span.status.code).toBe(STATUS_ERROR);
    expect(span.attributes).toMatchObject({ 'error.type': '503', 'gen_ai.provider.name': 'openai' });
    expect(span.attributes['gen_ai.response.finish_reasons']).toBeUndefined();
    // The lone target is retried once.
    expect(span.events.map((event) => [event.attributes['sbc.route.outcome'], event.attributes['error.type']])).toEqual(
      [
        ['failed', '503'],
        ['failed', '503'],
      ],
    );
  });

  it('the GenAI histograms are on the scrape beside the Prometheus ones', async () => {
    const stream = await stack.openai.chat.completions.create({
      model: 'house',
      messages: [{ role: 'user', content: TEXT_PROMPT }],
      stream: true,
    });
    for await (const chunk of stream) void chunk;
    const scrape = await (await fetch(`${stack.edge.url}/metrics`)).text();
    const labels =
      'service="gateway",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="house",' +
      'gen_ai_response_model="sim-large"';
    expect(scrape).toContain('# TYPE gen_ai_client_token_usage histogram');
    expect(scrape).toMatch(
      new RegExp(`gen_ai_client_token_usage_count\\{${labels},gen_ai_token_type="input"\\} [1-9]`),
    );
    expect(scrape).toMatch(
      new RegExp(`gen_ai_client_token_usage_count\\{${labels},gen_ai_token_type="output"\\} [1-9]`),
    );
    expect(scrape).toMatch(new RegExp(`gen_ai_server_time_to_first_token_seconds_count\\{${labels}\\} 1\\n`));
    expect(scrape).toContain('sbc_model_calls_total');
  });

  it('with OTEL_GENAI_CAPTURE_CONTENT the prompt and completion are recorded, secrets redacted', async () => {
    const edge = await stack.startEdge(
      { house: [{ dialect: 'openai', base_url: `${stack.sim.url}/v1`, model: 'sim-large', label: 'sim' }] },
      { OTEL_GENAI_CAPTURE_CONTENT: 'true' },
    );
    const since = receiver.spans.length;
    const prompt = `Use ${SECRET_KEY} and ${GATEWAY_KEY} to call it`;
    const completion = await openAiFor(edge.url).chat.completions.create({
      model: 'house',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: prompt },
      ],
    });
    // The sim echoes the prompt, so the reply holds the secrets too.
    expect(completion.choices[0]!.message.content).toContain(SECRET_KEY);

    const span = await exported(since, 'chat house');
    const input = JSON.parse(String(span.attributes['gen_ai.input.messages']));
    const output = JSON.parse(String(span.attributes['gen_ai.output.messages']));
    const redacted = 'Use [redacted] and [redacted] to call it';
    expect(input).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: redacted }] },
    ]);
    expect(output).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: expect.stringContaining(redacted) }],
        finish_reason: 'stop',
      },
    ]);
    const everything = JSON.stringify(receiver.spans);
    expect(everything).not.toContain(SECRET_KEY);
    expect(everything).not.toContain(GATEWAY_KEY);
    // Anthropic callers' messages and a stream's delivered text are captured the same way.
    const sinceStream = receiver.spans.length;
    const stream = anthropicFor(edge.url).messages.stream({
      model: 'house',
      max_tokens: 200,
      messages: [{ role: 'user', content: prompt }],
    });
    await stream.finalMessage();
    const streamed = await exported(sinceStream, 'chat house');
    expect(JSON.parse(String(streamed.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: expect.stringContaining(redacted) }],
        finish_reason: 'stop',
      },
    ]);
    expect(JSON.stringify(receiver.spans)).not.toContain(SECRET_KEY);
  });
});

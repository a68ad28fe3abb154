import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ChatRequest } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { Registry } from '@sbc/metrics';
import { inSpan, SpanKind, SpanStatusCode, startTracing, type Tracing } from '@sbc/telemetry';
import type { Target } from '../routing/targets';
import { ATTEMPT_EVENT, createGenAiTelemetry, finishReason, type GenAiOutcome } from './genai-telemetry';

function target(kind: Target['kind'], dialect: 'openai' | 'anthropic' = 'openai'): Target {
  return {
    engine: { dialect, baseUrl: 'http://engine.test', model: 'engine-model', headers: {}, label: 'engine-a' },
    kind,
    label: kind === 'byo' ? 'byo:mine' : kind,
    upstream: kind,
    healthKey: kind === 'byo' ? 'byo:usr_1/mine' : `${kind}|http://engine.test#engine-model`,
    callerModel: 'asked-model',
    catalogId: kind === 'byo' ? undefined : 'catalog-model',
  };
}

const served = (over: Partial<GenAiOutcome> = {}): GenAiOutcome => ({
  status: 200,
  target: target('house'),
  attempts: 1,
  usage: { inputTokens: 12, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
  ttftMs: 250,
  stopReason: 'end_turn',
  ...over,
});

const PROMPT: ChatRequest = {
  model: 'asked-model',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello sk-abcdefghijklmnop' }] }],
  stream: false,
  dropped: [],
};

async function histogram(registry: Registry, name: string): Promise<string> {
  return (await registry.getSingleMetricAsString(name)) ?? '';
}

describe('GenAI histograms', () => {
  it('are observed with tracing off: tokens by type, and the first token of a successful stream', async () => {
    const registry = new Registry();
    const genai = createGenAiTelemetry(registry, { captureContent: false });
    const call = { callerModel: 'asked-model', stream: true };
    await genai.traceCall(
      'chat',
      call,
      [],
      () => undefined,
      async () => served(),
    );
    const tokens = await histogram(registry, 'gen_ai_client_token_usage');
    const labels =
      'gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="catalog-model",' +
      'gen_ai_response_model="engine-model"';
    expect(tokens).toContain(`gen_ai_client_token_usage_sum{${labels},gen_ai_token_type="input"} 12`);
    expect(tokens).toContain(`gen_ai_client_token_usage_sum{${labels},gen_ai_token_type="output"} 30`);
    const ttft = await histogram(registry, 'gen_ai_server_time_to_first_token_seconds');
    expect(ttft).toContain(`gen_ai_server_time_to_first_token_seconds_sum{${labels}} 0.25`);
  });

  it('leave out the models of a caller’s own endpoint, and the first token of a whole reply or a failure', async () => {
    const registry = new Registry();
    const genai = createGenAiTelemetry(registry, { captureContent: false });
    const byo = served({ target: target('byo', 'anthropic') });
    await genai.traceCall(
      'chat',
      { callerModel: 'my-model', stream: true },
      [],
      () => undefined,
      async () => byo,
    );
    await genai.traceCall(
      'chat',
      { callerModel: 'x', stream: false },
      [],
      () => undefined,
      async () => served(),
    );
    await genai.traceCall(
      'chat',
      { callerModel: 'x', stream: true },
      [],
      () => undefined,
      async () =>
        served({ status: 502, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } }),
    );
    const tokens = await histogram(registry, 'gen_ai_client_token_usage');
    expect(tokens).toContain(
      'gen_ai_client_token_usage_count{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",' +
        'gen_ai_token_type="input"} 1',
    );
    expect(tokens).not.toContain('my-model');
    const ttft = await histogram(registry, 'gen_ai_server_time_to_first_token_seconds');
    expect(ttft).toMatch(/_count\{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic"\} 1$/);
    expect(ttft).not.toContain('catalog-model');
  });
});

describe('GenAI spans', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  beforeAll(() => {
    tracing = startTracing({ service: 'test', exporter });
  });
  afterAll(() => tracing.shutdown());
  beforeEach(() => exporter.reset());

  it('name the operation and model, and carry the outcome and each attempt', async () => {
    const genai = createGenAiTelemetry(new Registry(), { captureContent: false });
    const prompt = jest.fn(() => PROMPT);
    const first = target('house');
    const second: Target = { ...target('provider', 'anthropic'), label: 'provider:anthropic/eu' };
    await genai.traceCall('chat', { callerModel: 'asked-model', stream: false }, [first, second], prompt, async () => {
      genai.attempt(first, 'failed', 503);
      genai.attempt(second, 'ok');
      return served({
        target: second,
        attempts: 2,
        stopReason: 'max_tokens',
        usage: { inputTokens: 12, outputTokens: 30, cacheReadTokens: 4, cacheWriteTokens: 0 },
      });
    });
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('chat asked-model');
    expect(span!.kind).toBe(SpanKind.CLIENT);
    expect(span!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'asked-model',
      'gen_ai.request.stream': false,
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.response.model': 'engine-model',
      'gen_ai.response.finish_reasons': ['max_tokens'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 4,
      'sbc.served_by': 'provider:anthropic/eu',
      'sbc.route.attempts': 2,
      'http.response.status_code': 200,
    });
    expect(span!.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        ATTEMPT_EVENT,
        {
          'sbc.route.target': 'house',
          'sbc.route.engine': 'engine-a',
          'sbc.route.outcome': 'failed',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'engine-model',
          'error.type': '503',
        },
      ],
      [
        ATTEMPT_EVENT,
        {
          'sbc.route.target': 'provider:anthropic/eu',
          'sbc.route.engine': 'engine-a',
          'sbc.route.outcome': 'ok',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'engine-model',
        },
      ],
    ]);
    // Content stays out unless the operator asks for it: the prompt is not even read.
    expect(prompt).not.toHaveBeenCalled();
  });

  it('an attempt outside a call’s span is no event on another span', async () => {
    const genai = createGenAiTelemetry(new Registry(), { captureContent: false });
    await inSpan('other', SpanKind.INTERNAL, undefined, async () => genai.attempt(target('house'), 'ok'));
    expect(exporter.getFinishedSpans()[0]!.events).toEqual([]);
  });

  it('a refusal thrown by the exchange ends the span as an error with its code, and is rethrown', async () => {
    const genai = createGenAiTelemetry(new Registry(), { captureContent: false });
    const refusal = new ApiError('budget_exhausted', 'No credits left.');
    const work = async (): Promise<GenAiOutcome> => {
      throw refusal;
    };
    await expect(
      genai.traceCall('chat', { callerModel: 'm', stream: false }, [target('house')], () => undefined, work),
    ).rejects.toBe(refusal);
    const [span] = exporter.getFinishedSpans();
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes).toMatchObject({ 'error.type': 'budget_exhausted', 'gen_ai.provider.name': 'openai' });
  });

  it('a call answered with an upstream error carries its status as error.type', async () => {
    const genai = createGenAiTelemetry(new Registry(), { captureContent: false });
    await genai.traceCall(
      'embeddings',
      { callerModel: 'm', stream: false },
      [],
      () => undefined,
      async () => served({ status: 504, stopReason: undefined }),
    );
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('embeddings m');
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes['error.type']).toBe('504');
    expect(span!.attributes['gen_ai.response.finish_reasons']).toBeUndefined();
  });

  it('with content capture on, record the prompt and completion, redacted', async () => {
    const genai = createGenAiTelemetry(new Registry(), { captureContent: true });
    await genai.traceCall(
      'chat',
      { callerModel: 'm', stream: false },
      [],
      () => PROMPT,
      async () => served({ completion: () => [{ type: 'text', text: 'your key sk-abcdefghijklmnop works' }] }),
    );
    const [span] = exporter.getFinishedSpans();
    expect(JSON.parse(String(span!.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'hello [redacted]' }] },
    ]);
    expect(JSON.parse(String(span!.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'your key [redacted] works' }], finish_reason: 'stop' },
    ]);
  });
});

describe('finishReason', () => {
  it('spells the stop reason as the provider’s API does', () => {
    expect(finishReason('openai', 'end_turn')).toBe('stop');
    expect(finishReason('openai', 'max_tokens')).toBe('length');
    expect(finishReason('openai', 'tool_use')).toBe('tool_calls');
    expect(finishReason('anthropic', 'end_turn')).toBe('end_turn');
    expect(finishReason('anthropic', 'context_window_exceeded')).toBe('model_context_window_exceeded');
  });
});

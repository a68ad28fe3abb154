import {
  chatFinishReason,
  messagesStopReason,
  type AssistantBlock,
  type ChatRequest,
  type StopReason,
  type UpstreamDialect,
} from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { HotPathHistogram, type Registry } from '@sbc/metrics';
import {
  activeContext,
  activeSpan,
  SpanKind,
  SpanStatusCode,
  startSpan,
  tracingEnabled,
  withContext,
  type Span,
} from '@sbc/telemetry';
import type { Target } from '../routing/targets';
import { inputMessages, outputMessages } from './genai-content';

// The OpenTelemetry GenAI semantic conventions on model calls: one span per call with the gen_ai.* attributes
// and each routing attempt as an event, and the two GenAI histograms beside the edge's Prometheus series.
// `gen_ai.provider.name` is the flavour of the API the gateway spoke to the target: `openai` for every
// OpenAI-compatible engine (as the conventions advise when the real vendor is hidden behind that API),
// `anthropic` for the Messages API; `sbc.served_by` names the target itself.
// The names are copied from @opentelemetry/semantic-conventions' incubating entry (v1.45), as that package
// asks of its unstable conventions, rather than imported from it.

const ATTR_OPERATION_NAME = 'gen_ai.operation.name';
const ATTR_PROVIDER_NAME = 'gen_ai.provider.name';
const ATTR_REQUEST_MODEL = 'gen_ai.request.model';
const ATTR_REQUEST_STREAM = 'gen_ai.request.stream';
const ATTR_RESPONSE_MODEL = 'gen_ai.response.model';
const ATTR_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
const ATTR_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
const ATTR_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
const ATTR_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
const ATTR_USAGE_CACHE_CREATION_INPUT_TOKENS = 'gen_ai.usage.cache_creation.input_tokens';
const ATTR_INPUT_MESSAGES = 'gen_ai.input.messages';
const ATTR_OUTPUT_MESSAGES = 'gen_ai.output.messages';
const ATTR_ERROR_TYPE = 'error.type';

/** The span event of one routing attempt (this gateway's own name, under `sbc.`, like its attributes). */
export const ATTEMPT_EVENT = 'sbc.route.attempt';

/** `gen_ai.operation.name`: all three chat dialects are `chat`; embeddings calls say `embeddings`. */
export type GenAiOperation = 'chat' | 'embeddings';

/** How an attempt on one target ended (the routing policy's words, as in `sbc_upstream_attempts_total`). */
export type AttemptOutcome = 'ok' | 'failed' | 'refused' | 'overloaded';

/** What a finished model call tells its span and the histograms. */
export interface GenAiOutcome {
  /** Status as the caller saw it. */
  status: number;
  /** The target that served, or the last one tried. */
  target?: Target;
  attempts: number;
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
  /** Ms from the call's start to its first token, 0 when none came. */
  ttftMs: number;
  stopReason?: StopReason;
  /** What the reply said, read only when content is captured. */
  completion?: () => AssistantBlock[];
}

/** The call as the span needs it. */
export interface GenAiCall {
  /** The model the caller named. */
  callerModel: string;
  stream: boolean;
}

export interface GenAiTelemetryOptions {
  /** OTEL_GENAI_CAPTURE_CONTENT: record prompts and completions (secrets redacted) on the spans. */
  captureContent: boolean;
}

/** Token counts of one call range from a few to millions: the buckets the conventions recommend. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The stop reason as the provider's API spells it (`stop`, `length` … or `end_turn`, `max_tokens` …). */
export function finishReason(dialect: UpstreamDialect, reason: StopReason): string {
  return dialect === 'anthropic' ? messagesStopReason(reason) : chatFinishReason(reason);
}

/** `error.type` of a call that ended in an error: the refusal's code, or the status it was answered with. */
function errorType(thrown: unknown): string {
  if (thrown instanceof ApiError) return thrown.code;
  return thrown instanceof Error ? thrown.name : 'unknown';
}

/**
 * The model-call step's telemetry, chosen once in main.ts. `traceCall` wraps a call's exchange: with tracing on
 * and the span sampled, it is a CLIENT span `{operation} {model}` with the upstream HTTP calls as its children;
 * with tracing off it costs one check. The histograms are observed either way, labelled by the operation, the
 * provider and the token type, and by the models only for the operator's own engines (a caller's endpoint
 * names its models as it likes, which would make the series count unbounded).
 */
export function createGenAiTelemetry(registry: Registry, options: GenAiTelemetryOptions) {
  const registers = [registry];
  const labelNames = [
    'gen_ai_operation_name',
    'gen_ai_provider_name',
    'gen_ai_request_model',
    'gen_ai_response_model',
  ] as const;
  const tokenUsage = new HotPathHistogram({
    name: 'gen_ai_client_token_usage',
    help: 'gen_ai.client.token.usage ({token}): input and output tokens of each model call, by gen_ai_token_type.',
    labelNames: [...labelNames, 'gen_ai_token_type'],
    buckets: TOKEN_BUCKETS,
    registers,
  });
  const timeToFirstToken = new HotPathHistogram({
    name: 'gen_ai_server_time_to_first_token_seconds',
    help: 'gen_ai.server.time_to_first_token (s): from a streamed call arriving to its first token, successful calls.',
    labelNames,
    buckets: TTFT_BUCKETS_S,
    registers,
  });
  // The spans this module opened: an attempt is an event on the call's span, never on another active one.
  const callSpans = new WeakSet<Span>();

  function observe(operation: GenAiOperation, call: GenAiCall, outcome: GenAiOutcome): void {
    const target = outcome.target;
    if (!target) return;
    // A BYO target's models are the caller's own: no label names them (undefined is no label).
    const byo = target.kind === 'byo';
    const labels: CallLabels = {
      gen_ai_operation_name: operation,
      gen_ai_provider_name: target.engine.dialect,
      gen_ai_request_model: byo ? undefined : (target.catalogId ?? call.callerModel),
      gen_ai_response_model: byo ? undefined : target.engine.model,
    };
    const { inputTokens, outputTokens } = outcome.usage;
    if (inputTokens > 0) tokenUsage.observe(withTokenType(labels, 'input'), inputTokens);
    if (outputTokens > 0) tokenUsage.observe(withTokenType(labels, 'output'), outputTokens);
    // A whole reply's wait is not a first token: only streams say when theirs came.
    if (call.stream && outcome.status === 200 && outcome.ttftMs > 0)
      timeToFirstToken.observe(labels, outcome.ttftMs / 1000);
  }

  function finish(span: Span, outcome: GenAiOutcome, prompt: () => ChatRequest | undefined): void {
    const target = outcome.target;
    span.setAttributes({
      [ATTR_USAGE_INPUT_TOKENS]: outcome.usage.inputTokens,
      [ATTR_USAGE_OUTPUT_TOKENS]: outcome.usage.outputTokens,
      'sbc.route.attempts': outcome.attempts,
      'http.response.status_code': outcome.status,
    });
    if (outcome.usage.cacheReadTokens > 0)
      span.setAttribute(ATTR_USAGE_CACHE_READ_INPUT_TOKENS, outcome.usage.cacheReadTokens);
    if (outcome.usage.cacheWriteTokens > 0)
      span.setAttribute(ATTR_USAGE_CACHE_CREATION_INPUT_TOKENS, outcome.usage.cacheWriteTokens);
    if (target) {
      span.setAttributes({
        [ATTR_PROVIDER_NAME]: target.engine.dialect,
        [ATTR_RESPONSE_MODEL]: target.engine.model,
        'sbc.served_by': target.label,
      });
    }
    const reason = target && outcome.stopReason ? finishReason(target.engine.dialect, outcome.stopReason) : undefined;
    if (reason) span.setAttribute(ATTR_RESPONSE_FINISH_REASONS, [reason]);
    if (outcome.status >= 400) {
      span.setAttribute(ATTR_ERROR_TYPE, String(outcome.status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    if (options.captureContent) captureContent(span, outcome, reason, prompt);
  }

  function captureContent(
    span: Span,
    outcome: GenAiOutcome,
    reason: string | undefined,
    prompt: () => ChatRequest | undefined,
  ): void {
    try {
      const request = prompt();
      if (request) span.setAttribute(ATTR_INPUT_MESSAGES, inputMessages(request));
    } catch {
      // A prompt that cannot be read back records none; the call itself was answered already.
    }
    const blocks = outcome.completion?.();
    if (blocks && blocks.length > 0) span.setAttribute(ATTR_OUTPUT_MESSAGES, outputMessages(blocks, reason));
  }

  return {
    /**
     * Runs a model call's exchange under its GenAI span and observes its outcome. `targets` are the call's
     * planned targets (the first names the provider until one serves); `prompt` is read only when content is
     * captured.
     */
    async traceCall<O extends GenAiOutcome>(
      operation: GenAiOperation,
      call: GenAiCall,
      targets: readonly Target[],
      prompt: () => ChatRequest | undefined,
      work: () => Promise<O>,
    ): Promise<O> {
      if (!tracingEnabled()) {
        const outcome = await work();
        observe(operation, call, outcome);
        return outcome;
      }
      const requestModel = call.callerModel;
      const { span, context } = startSpan(`${operation} ${requestModel}`, SpanKind.CLIENT, activeContext());
      if (span.isRecording()) {
        callSpans.add(span);
        span.setAttributes({
          [ATTR_OPERATION_NAME]: operation,
          [ATTR_REQUEST_MODEL]: requestModel,
          [ATTR_REQUEST_STREAM]: call.stream,
        });
        if (targets[0]) span.setAttribute(ATTR_PROVIDER_NAME, targets[0].engine.dialect);
      }
      try {
        const outcome = await withContext(context, work);
        observe(operation, call, outcome);
        if (span.isRecording()) finish(span, outcome, prompt);
        return outcome;
      } catch (error) {
        span.setAttribute(ATTR_ERROR_TYPE, errorType(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
    /** One routing attempt, as an event on the call's span (the routing policy's `onAttempt`). */
    attempt(target: Target, outcome: AttemptOutcome, failedStatus?: number): void {
      const span = activeSpan();
      if (!span || !callSpans.has(span)) return;
      const attributes: Record<string, string> = {
        // As `x-sbc-served-by` names it, and the engine behind it (a house model's fallbacks share `house`).
        'sbc.route.target': target.label,
        'sbc.route.engine': target.engine.label,
        'sbc.route.outcome': outcome,
        [ATTR_PROVIDER_NAME]: target.engine.dialect,
        // The model this attempt asked its engine for.
        [ATTR_REQUEST_MODEL]: target.engine.model,
      };
      if (failedStatus !== undefined) attributes[ATTR_ERROR_TYPE] = String(failedStatus);
      span.addEvent(ATTEMPT_EVENT, attributes);
    },
  };
}

export type GenAiTelemetry = ReturnType<typeof createGenAiTelemetry>;

/** A call's labels on the GenAI series, every one named (a label left undefined is not set). */
interface CallLabels {
  gen_ai_operation_name: string;
  gen_ai_provider_name: string;
  gen_ai_request_model: string | undefined;
  gen_ai_response_model: string | undefined;
}

/**
 * The labels with the token type, as one literal: a spread copy with one more key (`{ ...labels, gen_ai_token_type }`)
 * gets a hidden class of its own on every call on Node 20 (docs/benchmarks.md, "Hidden classes made per call").
 */
function withTokenType(labels: CallLabels, type: 'input' | 'output') {
  return {
    gen_ai_operation_name: labels.gen_ai_operation_name,
    gen_ai_provider_name: labels.gen_ai_provider_name,
    gen_ai_request_model: labels.gen_ai_request_model,
    gen_ai_response_model: labels.gen_ai_response_model,
    gen_ai_token_type: type,
  };
}

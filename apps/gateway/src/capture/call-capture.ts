import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '@sbc/logging';
import { creditsFromMicrocredits, microcredits, nanoUsd, usdFromNanoUsd } from '@sbc/money';
import type { CallHook, HookPart } from '../model-calls/call-hooks';
import { endpointUrl } from '../upstream/endpoint-url';
import { headersFor, type UpstreamCall, type UpstreamRequest } from '../upstream/client';
import type { UsageFields } from '../usage/usage-events';
import type { CaptureStore } from './capture-store';
import { redactSecrets } from '@sbc/guardrails';
import { CappedText, redactHeaders, shownUrl } from './redact';

/** The request header that asks for a capture; honoured for a signed-in session only. */
const CAPTURE_HEADER = 'x-sbc-capture';
/** Each body (sent and received) is kept up to this size. */
const CAPTURE_BODY_LIMIT_BYTES = 256 * 1024;

export interface CaptureDeps {
  captures: CaptureStore;
  logger: Logger;
}

/** One upstream attempt as it is being captured. */
interface AttemptCapture {
  request: UpstreamRequest;
  sentHeaders: Record<string, string>;
  sent: CappedText;
  status?: number;
  headers?: IncomingHttpHeaders;
  received: CappedText;
  error?: string;
}

/**
 * The playground's captures, a hook on the call path: when the caller asked for one (`x-sbc-capture: 1`) and is a
 * signed-in session, each upstream request as sent and each reply as received are kept, with the call's usage
 * figures, for that account alone to read for a short time (GET /v1/usage/requests/{request_id}/capture). A key or
 * a device token asking takes no part: an API caller can never make the edge keep bodies.
 */
export function createCaptureHook(deps: CaptureDeps): CallHook {
  return {
    partIn({ headers, principal, out }) {
      if (headers[CAPTURE_HEADER] !== '1' || principal.kind !== 'session') return undefined;
      return new CallCapture(deps, principal.userId, out.requestId);
    },
  };
}

class CallCapture implements HookPart {
  private readonly attempts: AttemptCapture[] = [];
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly deps: CaptureDeps,
    private readonly userId: string,
    private readonly requestId: string,
  ) {}

  attempt(request: UpstreamRequest, reply: UpstreamCall): void {
    this.attempts.push(watchAttempt(request, reply));
  }

  /** Kept before the reply's last bytes go out (records are awaited there), so the page can read it at once. */
  async record(fields: UsageFields): Promise<void> {
    const json = JSON.stringify(renderCapture(this.requestId, this.startedAt, this.attempts, fields));
    await this.deps.captures.put(this.userId, this.requestId, json).catch((err: unknown) => {
      this.deps.logger.warn({ requestId: this.requestId, err }, 'keeping a call capture failed');
    });
  }
}

function watchAttempt(request: UpstreamRequest, call: UpstreamCall): AttemptCapture {
  const attempt: AttemptCapture = {
    request,
    sentHeaders: headersFor(request),
    sent: new CappedText(CAPTURE_BODY_LIMIT_BYTES),
    received: new CappedText(CAPTURE_BODY_LIMIT_BYTES),
  };
  attempt.sent.add(request.body);
  call.head.then(
    () => {
      attempt.status = call.status;
      attempt.headers = call.headers;
    },
    (error: Error) => {
      attempt.error = error.message;
    },
  );
  call.observe({
    data: (chunk) => attempt.received.add(chunk),
    end: () => undefined,
    error: (error) => {
      attempt.error = error.message;
    },
  });
  return attempt;
}

/** The capture as the route serves it: every secret withheld, every body in its own upstream dialect. */
function renderCapture(requestId: string, createdAt: string, attempts: AttemptCapture[], usage: UsageFields) {
  return {
    object: 'call_capture',
    call_request_id: requestId,
    created_at: createdAt,
    dialect: usage.dialectIn,
    model: usage.model,
    stream: usage.stream,
    attempts: attempts.map(renderAttempt),
    usage: {
      status: usage.status,
      served_by: usage.servedBy,
      attempts: usage.attempts,
      input_tokens: Number(usage.inputTokens),
      output_tokens: Number(usage.outputTokens),
      cache_read_tokens: Number(usage.cacheReadTokens),
      cache_write_tokens: Number(usage.cacheWriteTokens),
      // The usage row's own figures, as GET /v1/usage/requests shows them: list cost in USD, credits charged.
      total_cost: usdFromNanoUsd(nanoUsd(Number(usage.listCostNanoUsd ?? 0n))),
      credits_charged: creditsFromMicrocredits(microcredits(Number(usage.creditsChargedMicrocredits ?? 0n))),
      is_byok: usage.isByok,
      latency_ms: Number(usage.latencyMs),
      ttft_ms: Number(usage.ttftMs),
    },
  };
}

function renderAttempt(attempt: AttemptCapture) {
  const { engine, path } = attempt.request;
  // What the edge knows is secret whatever its shape: the engine's key and its own header values.
  const known = [engine.apiKey ?? '', ...Object.values(engine.headers)];
  const target = endpointUrl(engine.baseUrl, path);
  return {
    upstream_dialect: engine.dialect,
    model: engine.model,
    method: 'POST',
    path: new URL(target.path, target.origin).pathname,
    // The operator's engines are named by label only; a caller's own endpoint is its own address to see.
    url: engine.dialAs ? shownUrl(target.origin, target.path) : null,
    request: {
      headers: redactHeaders(attempt.sentHeaders),
      body: redactSecrets(attempt.sent.text(), known),
      truncated_bytes: attempt.sent.dropped,
    },
    response:
      attempt.status === undefined
        ? null
        : {
            status: attempt.status,
            headers: redactHeaders(attempt.headers ?? {}),
            body: redactSecrets(attempt.received.text(), known),
            truncated_bytes: attempt.received.dropped,
          },
    error: attempt.error ?? null,
  };
}

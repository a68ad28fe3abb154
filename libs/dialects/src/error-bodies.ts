import type { Dialect, UpstreamFailure } from './ir';
import { isObject, stringOf } from './json';

/**
 * HTTP error bodies: reading any upstream's, and writing the caller's dialect (dialects.md §2.6, §4.6, §6.7).
 * The status carries the meaning; type and code are chosen for it, because both SDKs pick their error class
 * by status and clients such as Codex and Claude Code then read type or code to decide what to tell the user.
 */

/** Anthropic `error.type` by status. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * OpenAI `error.type` by status. OpenAI itself is loose here (a 429 says `requests` or `tokens`); these are
 * the names its documentation and SDK users look for. 402 has no OpenAI status: it is `insufficient_quota`,
 * the type (and code) OpenAI uses when credit runs out, which clients already treat as "stop retrying".
 */
export function openAiErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'insufficient_quota';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 429:
      return 'rate_limit_exceeded';
    default:
      return status >= 500 ? 'server_error' : 'invalid_request_error';
  }
}

/** Anthropic types and OpenAI types name kinds, not reasons; only real codes are passed on as OpenAI `code`. */
const TYPE_WORDS = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
  'server_error',
  'error',
]);

function openAiErrorCode(failure: UpstreamFailure): string | null {
  const own = failure.code;
  if (own && !TYPE_WORDS.has(own)) return own;
  switch (failure.status) {
    case 401:
      return 'invalid_api_key';
    case 402:
      return 'insufficient_quota';
    case 404:
      return failure.param === 'model' || /\bmodel\b/i.test(failure.message) ? 'model_not_found' : null;
    case 429:
      return 'rate_limit_exceeded';
    default:
      return null;
  }
}

export function renderErrorBody(
  dialect: Dialect,
  failure: UpstreamFailure,
  requestId: string,
): Record<string, unknown> {
  if (dialect === 'messages') {
    // An upstream's own `overloaded_error` stays one whatever 5xx carries it: Claude Code says "overloaded".
    const type =
      failure.code === 'overloaded_error' && failure.status >= 500
        ? 'overloaded_error'
        : anthropicErrorType(failure.status);
    return { type: 'error', error: { type, message: failure.message }, request_id: requestId };
  }
  return {
    error: {
      message: failure.message,
      type: openAiErrorType(failure.status),
      param: failure.param ?? null,
      code: openAiErrorCode(failure),
    },
    request_id: requestId,
  };
}

/** Bad gateway: the status when an upstream's answer cannot be used, whatever status it came with. */
const BAD_GATEWAY = 502;
const MAX_TEXT_MESSAGE = 500;

/**
 * Any upstream's error body: OpenAI `{error:{message,type,code,param}}`, Anthropic
 * `{type:"error",error:{type,message}}`, the `{error:"…"}`, `{message}` and `{detail}` forms of compatible
 * servers (FastAPI, vLLM, Ollama), or plain text. A status below 400 with an error body is a broken upstream (502).
 */
export function parseUpstreamError(status: number, body: unknown): UpstreamFailure {
  const failureStatus = status >= 400 && status <= 599 ? status : BAD_GATEWAY;
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body) as unknown;
    } catch {
      parsed = body;
    }
  }
  const fallback = `The upstream answered with HTTP ${status}.`;
  if (typeof parsed === 'string') {
    const text = parsed.trim();
    return {
      status: failureStatus,
      message: text === '' ? fallback : text.slice(0, MAX_TEXT_MESSAGE),
      code: null,
      param: null,
    };
  }
  if (!isObject(parsed)) return { status: failureStatus, message: fallback, code: null, param: null };

  const error = parsed.error;
  if (isObject(error)) {
    return {
      status: failureStatus,
      message: stringOf(error.message) ?? fallback,
      // vLLM puts the HTTP status in a numeric `code`; only a string code names a reason.
      code: stringOf(error.code) ?? stringOf(error.type) ?? null,
      param: stringOf(error.param) ?? null,
    };
  }
  const detail = parsed.detail;
  const message =
    stringOf(error) ??
    stringOf(parsed.message) ??
    stringOf(detail) ??
    (detail !== undefined ? JSON.stringify(detail) : undefined);
  return {
    status: failureStatus,
    message: message ?? fallback,
    code: stringOf(parsed.code) ?? stringOf(parsed.type) ?? null,
    param: null,
  };
}

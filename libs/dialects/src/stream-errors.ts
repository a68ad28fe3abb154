import { renderErrorBody } from './error-bodies';
import type { UpstreamFailure } from './ir';
import { isObject, numberOf, objectOf, stringOf } from './json';

/**
 * In-stream errors: reading them from upstream payloads and choosing each caller dialect's words for them.
 * A stream error arrives after a 200, so the status here is what the failure would have been had it come
 * first; renderers only use it to pick a type or code.
 */

/** Used when an upstream error names nothing we recognise: the upstream failed, we are the gateway. */
export const UNKNOWN_UPSTREAM_STATUS = 502;

const OPENAI_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  context_length_exceeded: 400,
  invalid_api_key: 401,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  model_not_found: 404,
  rate_limit_exceeded: 429,
  rate_limit_error: 429,
  insufficient_quota: 429,
  server_error: 500,
  internal_error: 500,
  api_error: 500,
  service_unavailable: 503,
  overloaded_error: 503,
  timeout: 504,
};

const ANTHROPIC_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Own keys only: an upstream code such as `constructor` must not find Object.prototype's. */
const statusOf = (table: Record<string, number>, key: string | undefined): number | undefined =>
  key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;

const isHttpStatus = (value: number | undefined): value is number =>
  value !== undefined && value >= 400 && value <= 599;

/**
 * An OpenAI-style in-stream error (`{"error":{message,type,param,code}}`, or the bare object). Compatible
 * servers vary: vLLM puts the HTTP status in a numeric `code`, others only a type; a numeric status wins,
 * then the code, then the type, else 502.
 */
export function failureFromChatError(payload: unknown): UpstreamFailure {
  const outer = objectOf(payload);
  const error = isObject(outer.error) ? outer.error : outer;
  const code = stringOf(error.code);
  const type = stringOf(error.type);
  const numeric = [numberOf(error.status), numberOf(error.code), numberOf(outer.status)].find(isHttpStatus);
  const status =
    numeric ?? statusOf(OPENAI_ERROR_STATUS, code) ?? statusOf(OPENAI_ERROR_STATUS, type) ?? UNKNOWN_UPSTREAM_STATUS;
  return {
    status,
    message: stringOf(error.message) ?? stringOf(outer.error) ?? 'The upstream stream failed.',
    code: code ?? type ?? null,
    param: stringOf(error.param) ?? null,
  };
}

/** An Anthropic `error` event: `{type:"error", error:{type, message}}`. */
export function failureFromMessagesError(payload: unknown): UpstreamFailure {
  const error = objectOf(objectOf(payload).error);
  const type = stringOf(error.type);
  return {
    status: statusOf(ANTHROPIC_ERROR_STATUS, type) ?? UNKNOWN_UPSTREAM_STATUS,
    message: stringOf(error.message) ?? 'The upstream stream failed.',
    code: type ?? null,
    param: null,
  };
}

/**
 * Chat callers: `{"error":{message,type,param,code}}`, which the OpenAI SDK throws on (dialects.md §1). Type
 * and code are the HTTP error body's, so a failure reads the same before and after the first byte. A
 * `requestId`, when the caller of this function knows one, is carried as the HTTP body carries it.
 */
export function chatStreamError(failure: UpstreamFailure, requestId?: string): string {
  const body = renderErrorBody('chat', failure, requestId ?? '');
  return JSON.stringify(requestId === undefined ? { error: body.error } : body);
}

/** Messages callers: the payload of `event: error`, typed as the HTTP error body would be. */
export function messagesStreamError(failure: UpstreamFailure, requestId?: string): string {
  const body = renderErrorBody('messages', failure, requestId ?? '');
  return JSON.stringify(requestId === undefined ? { type: 'error', error: body.error } : body);
}

/** The Responses `error.code` vocabulary is small; a rejected prompt and rate limits are the ones SDKs read. */
export function responsesErrorCode(failure: UpstreamFailure): string {
  if (failure.status === 429) return 'rate_limit_exceeded';
  if (failure.status === 400) return 'invalid_prompt';
  return 'server_error';
}

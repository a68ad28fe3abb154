/**
 * The one registry of error codes: each stable machine code with its HTTP status, its gRPC status and a
 * default message, plus what a caller should do and whether a retry helps. REST envelopes, gRPC status details,
 * dialect error bodies and the developer page's error reference are all derived from here, so a code cannot
 * ship without its documentation.
 */

/** gRPC status numbers (grpc/status.proto); kept here as plain numbers so this core has no I/O dependency. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export interface ErrorSpec {
  readonly status: number;
  readonly grpc: number;
  readonly message: string;
  /** What the caller should do about it, shown on the developer page under the code's anchor. */
  readonly action: string;
  /** Whether sending the same request again (after any wait the reply names) can succeed. */
  readonly retryable: boolean;
}

const registry = {
  invalid_request: {
    status: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The request is malformed or has an invalid field.',
    action:
      'Read `param` (the first bad field) and `issues` (every problem, with its path); fix the request and send it ' +
      'again.',
    retryable: false,
  },
  // RFC 8628 §3.5 / RFC 6749 §5.2: what a device polling POST /v1/devices/pair/token is told while it may not have its
  // token.
  authorization_pending: {
    status: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The pairing has not been approved yet; keep polling.',
    action:
      'Keep polling POST /v1/devices/pair/token at the `interval` the pairing gave until a person approves the code.',
    retryable: true,
  },
  slow_down: {
    status: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'Polling too fast; wait the new interval before polling again.',
    action: 'Add five seconds to your polling interval, then keep polling.',
    retryable: true,
  },
  expired_token: {
    status: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The pairing expired before it was approved; start again.',
    action: 'Start a new pairing with POST /v1/devices/pair and show the new user code.',
    retryable: false,
  },
  access_denied: {
    status: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The pairing was denied.',
    action: 'The person declined the pairing; start a new one only if they ask for it.',
    retryable: false,
  },
  invalid_grant: {
    status: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The device code is unknown or was already exchanged.',
    action: 'Start a new pairing; a device code is exchanged for a token once.',
    retryable: false,
  },
  unauthorized: {
    status: 401,
    grpc: GrpcStatus.UNAUTHENTICATED,
    message: 'A valid caller key or session is required.',
    action:
      'Send `Authorization: Bearer <key>` (or `x-api-key`) with a live caller key, or sign in again for a new session.',
    retryable: false,
  },
  budget_exhausted: {
    status: 402,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The budget for this call is spent.',
    action:
      "Read `budget` (account, key_daily, key_monthly or fair_use): add credits, raise the key's limit, or wait for " +
      'the period to roll over.',
    retryable: false,
  },
  guardrail_blocked: {
    status: 400,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'A guardrail blocked this call.',
    action:
      'Read `guardrail` (its id, name and kind): change what the call sends, or ask whoever manages the key or team ' +
      'about the policy. The matched text is never repeated back.',
    retryable: false,
  },
  insufficient_scope: {
    status: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'This credential may not call this route.',
    action: 'Use a key that holds every scope in `required_scopes`, or mint one with them in the console.',
    retryable: false,
  },
  author_blocked: {
    status: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'This author is blocked.',
    action: 'An operator blocked this author; only an operator can lift it.',
    retryable: false,
  },
  model_not_allowed: {
    status: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'This key may not call this model.',
    action: "Call a model this key allows, or widen the key's model list.",
    retryable: false,
  },
  not_found: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    message: 'No such resource on this account.',
    action: 'Check the id and the path; resources of another account are not found either.',
    retryable: false,
  },
  // OpenAI's code for this case, which agent clients look for to resend the whole conversation instead.
  previous_response_not_found: {
    status: 404,
    grpc: GrpcStatus.NOT_FOUND,
    message: 'The response previous_response_id names is not stored for this account.',
    action:
      'Send the whole conversation in `input` instead. A response is kept only with `store` true (the default), for ' +
      '30 days, for the account (or the team of a team key) that made it, until it is deleted or the oldest of a ' +
      'full account are evicted.',
    retryable: false,
  },
  method_not_allowed: {
    status: 405,
    grpc: GrpcStatus.UNIMPLEMENTED,
    message: 'This method is not allowed on this route.',
    action: 'Use a method the route documents in the API reference.',
    retryable: false,
  },
  request_timeout: {
    status: 408,
    grpc: GrpcStatus.DEADLINE_EXCEEDED,
    message: 'The request did not arrive in time.',
    action: 'Send the whole request promptly; retry once the connection is healthy.',
    retryable: true,
  },
  conflict: {
    status: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The resource is not in a state that allows this change.',
    action: 'Read the resource again and decide from its current state; repeating the same change will not help.',
    retryable: false,
  },
  author_active_job: {
    status: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The author already has an active job.',
    action: "Wait for the author's running job to settle, then ask again.",
    retryable: true,
  },
  conversation_active_job: {
    status: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    message: 'The conversation already has an active job.',
    action: "Wait for the conversation's running job to settle, then ask again.",
    retryable: true,
  },
  request_too_large: {
    status: 413,
    grpc: GrpcStatus.OUT_OF_RANGE,
    message: 'The request body is too large.',
    action: 'Send a smaller body: fewer or shorter messages, or smaller attachments.',
    retryable: false,
  },
  unsupported_media_type: {
    status: 415,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The request body must be JSON.',
    action: 'Send the body as JSON with `content-type: application/json`.',
    retryable: false,
  },
  rate_limited: {
    status: 429,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: 'Too many requests for this key; retry after the reset.',
    action: 'Wait the `Retry-After` seconds (or until `x-ratelimit-reset`), then retry, and spread calls out.',
    retryable: true,
  },
  author_daily_limit: {
    status: 429,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: "The author's daily build limit is reached.",
    action: 'The author may ask for more builds tomorrow (UTC).',
    retryable: true,
  },
  headers_too_large: {
    status: 431,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The request headers are too large.',
    action: 'Send fewer or shorter headers (cookies are the usual cause).',
    retryable: false,
  },
  client_closed_request: {
    status: 499,
    grpc: GrpcStatus.CANCELLED,
    message: 'The caller closed the connection.',
    action:
      'The caller hung up before the reply; nothing to fix on the service side. Recorded in usage with status 499.',
    retryable: true,
  },
  internal_error: {
    status: 500,
    grpc: GrpcStatus.INTERNAL,
    message: 'The service failed to handle this request.',
    action: 'Retry with backoff; if it persists, report the `request_id` to the operator.',
    retryable: true,
  },
  upstream_error: {
    status: 502,
    grpc: GrpcStatus.UNAVAILABLE,
    message: 'The upstream could not be reached.',
    action: "The model's provider failed or could not be reached: retry with backoff, or call another model.",
    retryable: true,
  },
  service_unavailable: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    message: 'The service is not ready.',
    action: 'The service is starting, draining or overloaded: retry after `Retry-After` (or a second or two).',
    retryable: true,
  },
  usage_unrecordable: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    message: 'This gateway cannot record usage right now, so it takes no billable call.',
    action:
      'Billing events are waiting on this gateway (its event bus is unreachable and its spool on disk is nearly ' +
      'full): retry after `Retry-After`. Calls on your own endpoints and calls answered from the response cache ' +
      'are still served.',
    retryable: true,
  },
  queue_full: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    message: 'The build queue is full.',
    action: 'Retry later, when the build queue has room.',
    retryable: true,
  },
  daily_cap: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    message: "Today's build cap is spent.",
    action: "Retry tomorrow (UTC), when the day's build cap resets.",
    retryable: true,
  },
  intake_paused: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    message: 'Build intake is paused.',
    action: 'An operator paused build intake; retry once it resumes.',
    retryable: true,
  },
  app_capacity: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    message: 'The published app capacity is reached.',
    action: 'Published apps are at capacity; retry once an app is taken down.',
    retryable: true,
  },
  xbuilds_not_configured: {
    status: 503,
    grpc: GrpcStatus.UNAVAILABLE,
    message: 'The X builds lane is not configured.',
    action: 'The operator has not configured the X builds lane; retrying will not help until they do.',
    retryable: false,
  },
  upstream_cooling: {
    status: 429,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: 'Every upstream for this model is cooling down after failures.',
    action:
      'Each provider serving this model failed recently and is skipped until its cooldown ends: retry after the ' +
      "reply's retry-after seconds, or name fallback models in `models`.",
    retryable: true,
  },
  upstream_timeout: {
    status: 504,
    grpc: GrpcStatus.DEADLINE_EXCEEDED,
    message: 'The upstream did not answer in time.',
    action: 'The provider did not answer in time: retry, ask for fewer output tokens, or stream the reply.',
    retryable: true,
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof registry;

export const errorCodes = Object.keys(registry) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(registry, value);
}

export function errorSpec(code: ErrorCode): ErrorSpec {
  return registry[code];
}

/** The code a bare gRPC status stands for when a peer sent no structured details. */
export function codeForGrpcStatus(grpc: number): ErrorCode {
  switch (grpc) {
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.OUT_OF_RANGE:
      return 'invalid_request';
    case GrpcStatus.UNAUTHENTICATED:
      return 'unauthorized';
    case GrpcStatus.PERMISSION_DENIED:
      return 'insufficient_scope';
    case GrpcStatus.NOT_FOUND:
      return 'not_found';
    case GrpcStatus.ALREADY_EXISTS:
    case GrpcStatus.ABORTED:
    case GrpcStatus.FAILED_PRECONDITION:
      return 'conflict';
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return 'rate_limited';
    case GrpcStatus.CANCELLED:
      return 'client_closed_request';
    case GrpcStatus.DEADLINE_EXCEEDED:
    case GrpcStatus.UNAVAILABLE:
      return 'service_unavailable';
    default:
      return 'internal_error';
  }
}

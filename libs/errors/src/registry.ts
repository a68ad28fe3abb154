/**
 * The one registry of error codes: each stable machine code with its HTTP status, its gRPC status and a
 * default message. REST envelopes, gRPC status details and dialect error bodies are all derived from here.
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
}

const registry = {
  invalid_request: { status: 400, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'The request is malformed or has an invalid field.' },
  // RFC 8628 §3.5 / RFC 6749 §5.2: what a device polling POST /v1/devices/pair/token is told while it may not have its token.
  authorization_pending: { status: 400, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The pairing has not been approved yet; keep polling.' },
  slow_down: { status: 400, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'Polling too fast; wait the new interval before polling again.' },
  expired_token: { status: 400, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The pairing expired before it was approved; start again.' },
  access_denied: { status: 400, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The pairing was denied.' },
  invalid_grant: { status: 400, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The device code is unknown or was already exchanged.' },
  unauthorized: { status: 401, grpc: GrpcStatus.UNAUTHENTICATED, message: 'A valid caller key or session is required.' },
  budget_exhausted: { status: 402, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The budget for this call is spent.' },
  insufficient_scope: { status: 403, grpc: GrpcStatus.PERMISSION_DENIED, message: 'This credential may not call this route.' },
  author_blocked: { status: 403, grpc: GrpcStatus.PERMISSION_DENIED, message: 'This author is blocked.' },
  model_not_allowed: { status: 403, grpc: GrpcStatus.PERMISSION_DENIED, message: 'This key may not call this model.' },
  not_found: { status: 404, grpc: GrpcStatus.NOT_FOUND, message: 'No such resource on this account.' },
  method_not_allowed: { status: 405, grpc: GrpcStatus.UNIMPLEMENTED, message: 'This method is not allowed on this route.' },
  request_timeout: { status: 408, grpc: GrpcStatus.DEADLINE_EXCEEDED, message: 'The request did not arrive in time.' },
  conflict: { status: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The resource is not in a state that allows this change.' },
  author_active_job: { status: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The author already has an active job.' },
  conversation_active_job: { status: 409, grpc: GrpcStatus.FAILED_PRECONDITION, message: 'The conversation already has an active job.' },
  request_too_large: { status: 413, grpc: GrpcStatus.OUT_OF_RANGE, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'The request body must be JSON.' },
  rate_limited: { status: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, message: 'Too many requests for this key; retry after the reset.' },
  author_daily_limit: { status: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, message: "The author's daily build limit is reached." },
  headers_too_large: { status: 431, grpc: GrpcStatus.INVALID_ARGUMENT, message: 'The request headers are too large.' },
  client_closed_request: { status: 499, grpc: GrpcStatus.CANCELLED, message: 'The caller closed the connection.' },
  internal_error: { status: 500, grpc: GrpcStatus.INTERNAL, message: 'The service failed to handle this request.' },
  upstream_error: { status: 502, grpc: GrpcStatus.UNAVAILABLE, message: 'The upstream could not be reached.' },
  service_unavailable: { status: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'The service is not ready.' },
  queue_full: { status: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'The build queue is full.' },
  daily_cap: { status: 503, grpc: GrpcStatus.UNAVAILABLE, message: "Today's build cap is spent." },
  intake_paused: { status: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'Build intake is paused.' },
  app_capacity: { status: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'The published app capacity is reached.' },
  xbuilds_not_configured: { status: 503, grpc: GrpcStatus.UNAVAILABLE, message: 'The X builds lane is not configured.' },
  upstream_timeout: { status: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED, message: 'The upstream did not answer in time.' },
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

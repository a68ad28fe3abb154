import { Metadata, status as grpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ApiError, codeForGrpcStatus, errorSpec, isErrorCode, type ErrorCode, type Issue } from '@sbc/errors';
import { ErrorDetailSchema } from '@sbc/proto/sbc/errors/v1/error_detail_pb';
import { asBuffer } from './method-definition';

/** Trailing metadata key of the structured detail; `-bin` makes gRPC carry the value as raw bytes. */
export const ERROR_DETAIL_KEY = 'sbc-error-detail-bin';

/** What a grpc-js server callback (or a stream's 'error' event) accepts to end a call with a status. */
export type ServerStatusError = Error & Partial<StatusObject>;

/**
 * The status a handler failure is sent as. An ApiError keeps its code, message and detail; anything else
 * was not meant for the caller, so it leaves as a bare INTERNAL with the registry's generic message.
 */
export function toServerStatus(thrown: unknown): ServerStatusError {
  const error = ApiError.from(thrown);
  const metadata = new Metadata();
  if (thrown instanceof ApiError) metadata.set(ERROR_DETAIL_KEY, encodeDetail(error));
  const message = thrown instanceof ApiError ? error.message : errorSpec('internal_error').message;
  return Object.assign(new Error(message), { code: errorSpec(error.code).grpc, details: message, metadata });
}

function encodeDetail(error: ApiError): Buffer {
  const detail = create(ErrorDetailSchema, {
    code: error.code,
    message: error.message,
    param: error.param,
    issues: error.issues ?? [],
    hasIssues: error.issues !== undefined,
    extraJson: encodeExtra(error.extra),
  });
  return asBuffer(toBinary(ErrorDetailSchema, detail));
}

function encodeExtra(extra: Record<string, unknown>): string {
  if (Object.keys(extra).length === 0) return '';
  try {
    return JSON.stringify(extra);
  } catch {
    // A BigInt or a cycle: the code and message still travel, the extras cannot.
    return '';
  }
}

function isServiceError(value: unknown): value is ServiceError {
  return (
    value instanceof Error &&
    typeof (value as Partial<ServiceError>).code === 'number' &&
    (value as Partial<ServiceError>).metadata instanceof Metadata
  );
}

/**
 * Rebuilds the ApiError a peer sent (`cancelledByCaller`: this side cancelled the call itself). With a detail the error
 * comes back exactly as thrown; without one (grpc-js itself failed the call, or the peer is not ours) the status maps
 * through the registry and the peer's text stays in `cause` only, because an INTERNAL's text may hold internal detail.
 */
export function fromServiceError(thrown: unknown, serviceName: string, cancelledByCaller = false): ApiError {
  if (thrown instanceof ApiError) return thrown;
  if (!isServiceError(thrown)) return new ApiError('internal_error', undefined, { cause: thrown });
  const detailed = decodeDetail(thrown);
  if (detailed) return detailed;
  // CANCELLED is also what a client sees when the server resets the stream (a forced shutdown); only a
  // cancel this caller asked for is client_closed_request, any other means the service went away.
  if (thrown.code === grpcStatus.CANCELLED && !cancelledByCaller) {
    return new ApiError('service_unavailable', `${serviceName} ended the call before answering.`, { cause: thrown });
  }
  const code = codeForGrpcStatus(thrown.code);
  if (thrown.code === grpcStatus.DEADLINE_EXCEEDED) {
    return new ApiError(code, `${serviceName} did not answer before the deadline.`, { cause: thrown });
  }
  if (thrown.code === grpcStatus.UNAVAILABLE) {
    return new ApiError(code, `${serviceName} is unavailable.`, { cause: thrown });
  }
  return new ApiError(code, undefined, { cause: thrown });
}

function decodeDetail(error: ServiceError): ApiError | undefined {
  const [raw] = error.metadata.get(ERROR_DETAIL_KEY);
  if (!(raw instanceof Uint8Array)) return undefined;
  let detail;
  try {
    detail = fromBinary(ErrorDetailSchema, raw);
  } catch {
    return undefined;
  }
  // A code this build does not know (a newer peer) falls back to what the gRPC status means.
  const code: ErrorCode = isErrorCode(detail.code) ? detail.code : codeForGrpcStatus(error.code);
  const issues: Issue[] | undefined = detail.hasIssues
    ? detail.issues.map(({ path, code, message }) => ({ path, code, message }))
    : undefined;
  return new ApiError(code, detail.message || undefined, {
    param: detail.param,
    issues,
    extra: decodeExtra(detail.extraJson),
    cause: error,
  });
}

function decodeExtra(json: string): Record<string, unknown> {
  if (json === '') return {};
  try {
    const parsed: unknown = JSON.parse(json);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

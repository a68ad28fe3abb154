import { errorSpec } from '@sbc/errors';
import type { UpstreamFailure } from './ir';

/**
 * Why an upstream gave no usable answer:
 * - `unreachable`: no connection, a reset, a refused dial, or a body that broke off (502);
 * - `timeout`: connecting, the first byte or the body took too long (504);
 * - `overloaded`: the call was not sent, because the gateway's own queue for that upstream is full (503);
 * - `aborted`: the caller hung up (or the edge drained) and the request was stopped; nothing is answered;
 * - `bad_reply`: a 200 whose body is not a reply (some compatible servers put an error in a 200).
 */
export type UpstreamErrorReason = 'unreachable' | 'timeout' | 'overloaded' | 'aborted' | 'bad_reply';

/**
 * The one failure type of an upstream call. `failure` is what the caller would be answered, before the edge
 * dresses it for the caller's dialect (an overload's status, a code for the registry's verdict).
 */
export class UpstreamError extends Error {
  readonly reason: UpstreamErrorReason;
  readonly failure: UpstreamFailure;
  /** How long a caller should wait before retrying, when the reason names one (an overload). */
  readonly retryAfterSeconds?: number;

  constructor(
    reason: UpstreamErrorReason,
    failure: UpstreamFailure,
    options: { retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(failure.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UpstreamError';
    this.reason = reason;
    this.failure = failure;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** What a call stopped because its caller hung up rejects or fails with. */
  static aborted(): UpstreamError {
    return new UpstreamError('aborted', {
      // Never answered (nobody is listening); the status is the one usage records for the call.
      status: errorSpec('client_closed_request').status,
      message: 'The caller hung up; the upstream request was aborted.',
    });
  }

  get status(): number {
    return this.failure.status;
  }
}

import { errorSpec, isErrorCode, type ErrorCode } from './registry';

/** One problem in a request, as listed in `issues` (path in dotted form, e.g. `messages.0.role`). */
export interface Issue {
  path: string;
  code: string;
  message: string;
}

export interface ApiErrorOptions {
  param?: string;
  issues?: Issue[];
  /** Extra envelope fields the spec or CONTRACTS name for this code, e.g. `required_scopes`, `budget`. */
  extra?: Record<string, unknown>;
  /** Response headers that belong to the refusal, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A refusal with a stable code. Everything a caller may see; internal detail goes only to `cause`. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  /**
   * The sentence a caller is shown: what refusals render. It is `message` unless a subclass gives `message` a
   * fuller description for its own readers (logs, tests), as DialectRequestError does.
   */
  readonly callerMessage: string;
  readonly status: number;
  readonly param?: string;
  readonly issues?: Issue[];
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: ApiErrorOptions = {}) {
    super(message ?? errorSpec(code).message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.callerMessage = this.message;
    this.code = code;
    this.status = errorSpec(code).status;
    this.param = options.param;
    this.issues = options.issues;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  /** Normalises anything thrown into an ApiError; unknown failures become a detail-free internal_error. */
  static from(thrown: unknown): ApiError {
    if (thrown instanceof ApiError) return thrown;
    return new ApiError('internal_error', undefined, { cause: thrown });
  }

  /** A 400 listing every problem, with `param` naming the first. */
  static invalid(issues: Issue[], message?: string): ApiError {
    return new ApiError('invalid_request', message ?? issues[0]?.message, { param: issues[0]?.path, issues });
  }
}

export function isApiError(value: unknown): value is ApiError {
  return (
    value instanceof ApiError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { name?: unknown }).name === 'ApiError' &&
      isErrorCode(String((value as { code?: unknown }).code)))
  );
}

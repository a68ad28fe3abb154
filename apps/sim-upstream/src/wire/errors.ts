import type { SimResponse } from './response';

/** Which vendor's error envelope a response uses. Responses shares the chat (OpenAI) envelope. */
export type ErrorDialect = 'openai' | 'anthropic';

/** A failure the simulator answers on purpose, rendered in the caller's dialect. */
export class SimError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'SimError';
  }
}

function openAiType(status: number): string {
  if (status === 403) return 'permission_error';
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function openAiCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 404) return 'model_not_found';
  if (status === 429) return 'rate_limit_exceeded';
  return null;
}

const anthropicTypes: Record<number, string> = {
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

function anthropicType(status: number): string {
  return anthropicTypes[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/**
 * The JSON body for an error: `{error:{message,type,param,code}}` or `{type:"error", error:{type,message},
 * request_id}`.
 */
function errorBody(dialect: ErrorDialect, error: SimError, requestId: string): unknown {
  if (dialect === 'anthropic') {
    return {
      type: 'error',
      error: { type: anthropicType(error.status), message: error.message },
      request_id: requestId,
    };
  }
  return {
    error: {
      message: error.message,
      type: openAiType(error.status),
      param: error.param,
      code: error.code ?? openAiCode(error.status),
    },
  };
}

export function sendError(res: SimResponse, dialect: ErrorDialect, error: SimError, retryAfterS = 1): void {
  if (error.status === 429) res.setHeader('retry-after', String(retryAfterS));
  res.status(error.status).json(errorBody(dialect, error, String(res.getHeader('request-id') ?? '')));
}

/** Anthropic's envelope for Messages routes and for any request that carries `anthropic-version`; else OpenAI's. */
export function requestDialect(req: { path: string; headers: Record<string, unknown> }): ErrorDialect {
  return req.path.startsWith('/v1/messages') || req.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai';
}

import { ApiError, toEnvelope, type ErrorCode } from '@sbc/errors';
import type { ClientErrorStatus, RenderClientError } from '@sbc/http';
import { requestIdFor } from './request-id';

const CODES: Record<ClientErrorStatus, ErrorCode> = {
  400: 'invalid_request',
  408: 'request_timeout',
  413: 'request_too_large',
  431: 'headers_too_large',
};

/**
 * The refusals Node's parser answers before a route runs (headers too large, a request too slow, a request
 * that does not parse) in the shared envelope. The request id is the one the answer in progress already
 * carries, else the caller's, else a fresh one.
 */
export function renderClientError(baseUrl: string): RenderClientError {
  return (status, res) => {
    const started = res?.getHeader('x-request-id');
    const requestId = typeof started === 'string' ? started : requestIdFor(res?.req.headers['x-request-id']);
    const body = JSON.stringify(toEnvelope(new ApiError(CODES[status]), requestId, baseUrl));
    return { headers: { 'content-type': 'application/json', 'x-request-id': requestId }, body };
  };
}

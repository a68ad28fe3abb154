import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { requestIdFor } from '../http/request-id';
import { CallResponse } from '../model-calls/call-response';
import { HOP_HEADER } from './client';

/**
 * Refuses a model call that an edge of this gateway sent upstream (it carries HOP_HEADER): an endpoint aimed
 * back at the gateway, whatever address it reached it by. Answered at once in the caller's dialect, before
 * the credential or the body is looked at, so a loop costs one refused request instead of a fan-out.
 * Returns whether it answered.
 */
export function refuseReturningCall(
  req: IncomingMessage,
  res: ServerResponse,
  adapter: CallerDialect,
  baseUrl: string,
): boolean {
  if (req.headers[HOP_HEADER] === undefined) return false;
  const out = new CallResponse(res, adapter, requestIdFor(req.headers['x-request-id']), baseUrl);
  out.refuse(
    new ApiError(
      'invalid_request',
      'This call came from this gateway itself: an endpoint cannot point back into the gateway.',
      { param: 'base_url' },
    ),
  );
  return true;
}

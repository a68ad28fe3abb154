import type { CallerDialect } from '../adapter';
import { renderErrorBody } from '../error-bodies';
import { checkFallbackModels } from '../fallback-models';
import { countOf } from '../json';
import { responsesAsksForMcp } from '../mcp-tools';
import type { DialectIssue } from '../request-error';
import { parseResponsesRequest } from './parse-request';
import { renderResponsesResponse } from './render-response';
import { createResponsesStreamRenderer } from './stream-renderer';
import { openAiTokenLimitHeaders } from '../token-limit-headers';

/** The Responses dialect: no upstream speaks it here, so every call is translated. */
export const RESPONSES: CallerDialect = {
  name: 'responses',
  modelKind: 'chat',
  outputLimitFields: ['max_output_tokens'],
  nullOutputLimit: true,
  check(body) {
    const issues: DialectIssue[] = checkFallbackModels(body);
    if (typeof body.input !== 'string' && !Array.isArray(body.input)) {
      issues.push({ path: 'input', code: 'required', message: 'input must be a string or an array of items.' });
    }
    return issues;
  },
  requestedOutputLimit: (body) => countOf(body.max_output_tokens),
  includeUsage: () => false,
  parse: parseResponsesRequest,
  renderReply: (reply, request) => renderResponsesResponse(reply, request),
  streamRenderer: (options) => createResponsesStreamRenderer({ model: options.model, request: options.request }),
  errorBody: (failure, requestId) => renderErrorBody('responses', failure, requestId),
  overloadStatus: 503,
  tokenLimitHeaders: openAiTokenLimitHeaders,
  requestIdHeaders: (requestId) => ({ 'x-request-id': requestId }),
  asksForState: (body) =>
    body.store !== false || (body.previous_response_id !== undefined && body.previous_response_id !== null),
  asksForMcp: responsesAsksForMcp,
};

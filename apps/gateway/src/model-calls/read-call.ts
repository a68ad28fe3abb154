import type { IncomingMessage } from 'node:http';
import { fallbackModelsOf, type CallerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { findUnsafeString } from '../http/unsafe-strings';
import { MAX_TOKEN_COUNT } from '../limits/reservation-plan';
import { readJsonBody } from './body';
import { bodyOf, type CallerCall } from './plan';

/**
 * Reads the caller's body and checks it just enough to route it; the rest is the dialect parser's or the
 * upstream's job. A function of its own so that no frame but the call's keeps the parsed body (see `forgetBody`).
 */
export async function readCall(
  req: IncomingMessage,
  adapter: CallerDialect,
  maxBodyBytes: number,
): Promise<{ call: CallerCall; bytes: number }> {
  const { value, bytes, unsafeEscapes = false } = await readJsonBody(req, maxBodyBytes);
  return { call: checkedCall(adapter, value, unsafeEscapes), bytes };
}

/**
 * The envelope every dialect shares, then the dialect's own checks; every problem is listed at once. The walk
 * for an unsafe string is skipped when the body's text could not spell one (`unsafeEscapes` false).
 */
export function checkedCall(adapter: CallerDialect, value: unknown, unsafeEscapes = true): CallerCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('invalid_request', 'The request body must be a JSON object.', { param: 'body' });
  }
  const body = value as Record<string, unknown>;
  const issues: Array<{ path: string; code: string; message: string }> = [];
  if (typeof body.model !== 'string' || body.model === '') {
    issues.push({ path: 'model', code: 'required', message: 'model must be a non-empty string.' });
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    issues.push({ path: 'stream', code: 'invalid_type', message: 'stream must be a boolean.' });
  }
  issues.push(...adapter.check(body));
  for (const field of adapter.outputLimitFields) {
    const limit = body[field];
    // A count past any model's output limit is refused before it reaches the budget's arithmetic.
    if (limit === undefined || (limit === null && adapter.nullOutputLimit)) continue;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0 || limit > MAX_TOKEN_COUNT) {
      const message = `${field} must be an integer from 0 to ${MAX_TOKEN_COUNT}.`;
      issues.push({ path: field, code: 'invalid_value', message });
    }
  }
  const unsafe = unsafeEscapes ? findUnsafeString(body) : undefined;
  if (unsafe !== undefined) {
    const message = 'Strings must not contain NUL characters or unpaired UTF-16 surrogates.';
    issues.push({ path: unsafe === '' ? 'body' : unsafe, code: 'invalid_string', message });
  }
  if (issues.length > 0) throw ApiError.invalid(issues);
  return {
    adapter,
    body,
    callerModel: body.model as string,
    fallbacks: fallbackModelsOf(body),
    stream: body.stream === true,
    includeUsage: adapter.includeUsage(body),
  };
}

/** The field that carries the caller's output limit in its body (for a refusal's `param`). */
export function outputLimitField(call: CallerCall): string {
  const fields = call.adapter.outputLimitFields;
  return fields.find((field) => typeof bodyOf(call)[field] === 'number') ?? fields[0]!;
}

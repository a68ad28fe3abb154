import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelPrice } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import { DialectRequestError, ZERO_USAGE, type Dialect } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import { authorizeRequest, type AuthorizeDeps } from '../auth/authorize';
import type { Principal } from '../auth/authenticator';
import { requestIdFor } from '../http/request-id';
import { type Bucket, type Budget, type BudgetSubject, type Reservation } from '../limits/budget';
import { MAX_TOKEN_COUNT } from '../limits/reservation-plan';
import { rateLimitSubject, type RateLimiter } from '../limits/rate-limit';
import type { HouseEngines, ProviderEngines } from '../routing/engines';
import type { ResolvedRoute } from '../routing/resolve';
import type { RoutingTables } from '../routing/routing-tables';
import { passHeadersOf, type UpstreamClient } from '../upstream/client';
import type { UsageEmitter } from '../usage/usage-events';
import { readJsonBody } from './body';
import { CallResponse } from './call-response';
import { countRequestTokens } from './count-tokens';
import { exchange, type CallOutcome } from './exchange';
import { bodyOf, isPassthrough, parseCallerRequest, promptOf, requestedMaxTokens, type CallerCall } from './plan';
import type { Pricing } from './pricing';
import { resolveCallRoute } from './route-call';
import { settle } from './settle';
import { findUnsafeString } from '../http/unsafe-strings';

export interface ModelCallDeps extends AuthorizeDeps {
  baseUrl: string;
  maxBodyBytes: number;
  defaultMaxTokens: number;
  rateLimit: RateLimiter;
  budget: Budget;
  routing: RoutingTables;
  house: HouseEngines;
  providers: ProviderEngines;
  upstream: UpstreamClient;
  usage: UsageEmitter;
  pricing: Pricing;
  logger: Logger;
  /** Passed to exchange: streams still running when the drain time is up end with an error event. */
  drainDeadline?: AbortSignal;
}

/** The model routes answered on the edge's lean path (no Express), by path. */
export const MODEL_CALL_ROUTES: ReadonlyMap<string, Dialect> = new Map([
  ['/v1/chat/completions', 'chat'],
  ['/v1/responses', 'responses'],
  ['/v1/messages', 'messages'],
]);

/** Where each dialect takes the caller's output limit. */
const OUTPUT_LIMIT_FIELDS: Record<Dialect, readonly string[]> = {
  chat: ['max_tokens', 'max_completion_tokens'],
  responses: ['max_output_tokens'],
  messages: ['max_tokens'],
};

/**
 * The caller's body, read and checked just enough to route it; the rest is the dialect parser's or upstream's
 * job. A function of its own so that no frame but the call's keeps the parsed body (see `forgetBody`).
 */
async function readCall(req: IncomingMessage, dialect: Dialect, maxBodyBytes: number): Promise<{ call: CallerCall; bytes: number }> {
  const { value, bytes } = await readJsonBody(req, maxBodyBytes);
  return { call: checkedCall(dialect, value), bytes };
}

function checkedCall(dialect: Dialect, value: unknown): CallerCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('invalid_request', 'The request body must be a JSON object.', { param: 'body' });
  }
  const body = value as Record<string, unknown>;
  const issues: Array<{ path: string; code: string; message: string }> = [];
  if (typeof body.model !== 'string' || body.model === '') issues.push({ path: 'model', code: 'required', message: 'model must be a non-empty string.' });
  if (body.stream !== undefined && typeof body.stream !== 'boolean') issues.push({ path: 'stream', code: 'invalid_type', message: 'stream must be a boolean.' });
  if (dialect !== 'responses' && !Array.isArray(body.messages)) issues.push({ path: 'messages', code: 'required', message: 'messages must be an array.' });
  if (dialect === 'responses' && typeof body.input !== 'string' && !Array.isArray(body.input)) issues.push({ path: 'input', code: 'required', message: 'input must be a string or an array of items.' });
  if (dialect === 'messages' && body.max_tokens === undefined) issues.push({ path: 'max_tokens', code: 'required', message: 'max_tokens is required.' });
  for (const field of OUTPUT_LIMIT_FIELDS[dialect]) {
    const limit = body[field];
    // A count past any model's output limit is refused before it reaches the budget's arithmetic.
    if (limit === undefined || (limit === null && dialect !== 'messages')) continue;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0 || limit > MAX_TOKEN_COUNT) {
      issues.push({ path: field, code: 'invalid_value', message: `${field} must be an integer from 0 to ${MAX_TOKEN_COUNT}.` });
    }
  }
  const unsafe = findUnsafeString(body);
  if (unsafe !== undefined) {
    issues.push({ path: unsafe === '' ? 'body' : unsafe, code: 'invalid_string', message: 'Strings must not contain NUL characters or unpaired UTF-16 surrogates.' });
  }
  if (issues.length > 0) throw ApiError.invalid(issues);
  const streamOptions = body.stream_options as { include_usage?: unknown } | null | undefined;
  return {
    dialect,
    body,
    callerModel: body.model as string,
    stream: body.stream === true,
    includeUsage: dialect === 'chat' && streamOptions?.include_usage === true,
  };
}

/** The field that carries the caller's output limit in its body. */
function outputLimitField(call: CallerCall): string {
  return OUTPUT_LIMIT_FIELDS[call.dialect].find((field) => typeof bodyOf(call)[field] === 'number') ?? OUTPUT_LIMIT_FIELDS[call.dialect][0]!;
}

function budgetSubject(principal: Principal): BudgetSubject {
  const key = principal.key;
  return {
    userId: principal.userId,
    keyId: key?.id,
    dailyCapCredits: key?.dailyLimitCredits === undefined ? undefined : Number(key.dailyLimitCredits),
    monthlyCapCredits: key?.monthlyLimitCredits === undefined ? undefined : Number(key.monthlyLimitCredits),
  };
}

/** The prompt's tokens by the local tokenizer; a body the neutral parser cannot read keeps its byte bound. */
function countCallInput(call: CallerCall, bytes: number): number {
  try {
    return countRequestTokens(promptOf(call));
  } catch {
    return bytes;
  }
}

function asApiError(error: unknown): ApiError {
  if (error instanceof DialectRequestError) return ApiError.invalid(error.issues);
  return ApiError.from(error);
}

/**
 * One model call, top to bottom: request id → authenticate (cached) → rate limit → read body → resolve the
 * model (house models without any lookup; others from the cached routing table) → reserve budget →
 * exchange with the upstream → settle and emit one usage event. Nothing here waits on a database.
 */
export function createModelCallHandler(deps: ModelCallDeps) {
  return async function handleModelCall(req: IncomingMessage, res: ServerResponse, dialect: Dialect): Promise<void> {
    const startedAt = performance.now();
    const atMs = Date.now();
    const requestId = requestIdFor(req.headers['x-request-id']);
    const out = new CallResponse(res, dialect, requestId, deps.baseUrl);
    let principal: Principal | undefined;
    let call: CallerCall | undefined;
    let route: ResolvedRoute | undefined;
    let price: ModelPrice | undefined;
    let reservation: Reservation | undefined;
    let fairUse = false;
    let outcome: CallOutcome | undefined;
    /** The caller's request bucket, until this call has taken from it. */
    let bucket: Bucket | undefined;
    // Once per call: before the last bytes of a reply (exchange), or after a refusal or a hang-up here.
    let settled: Promise<void> | undefined;
    const settleOnce = (final: CallOutcome) =>
      (settled ??= settle(deps, { principal, call, route, price, reservation, fairUse, outcome: final, requestId, atMs, startedAt, dialect, sessionId: req.headers['x-session-id'] }));
    try {
      principal = await authorizeRequest(deps, req.headers, requestId, ['gateway:invoke']);
      // A priced call takes from its request bucket in the round trip that reserves its budget; any other
      // call (its own endpoint, free fair use) takes from it on its own.
      bucket = deps.rateLimit.bucket(rateLimitSubject(principal));
      const read = await readCall(req, dialect, deps.maxBodyBytes);
      call = read.call;
      const bytes = read.bytes;
      route = await resolveCallRoute(deps, principal, call.callerModel, requestId);
      if (route.engines.some((engine) => !isPassthrough(dialect, engine))) call.request = parseCallerRequest(dialect, bodyOf(call));

      price = deps.pricing.priceOf(route);
      if (route.kind !== 'byo' && price) {
        fairUse = route.catalogId === 'house-fast' && (await deps.budget.fairUseLeft(principal.userId));
        const requested = requestedMaxTokens(call);
        const catalogLimit = deps.pricing.outputLimitOf(route);
        if (requested !== undefined && catalogLimit !== undefined && requested > catalogLimit) {
          const field = outputLimitField(call);
          throw ApiError.invalid([{ path: field, code: 'too_big', message: `${field} is ${requested}; ${call.callerModel} produces at most ${catalogLimit} output tokens.` }]);
        }
        const modelLimit = catalogLimit ?? deps.defaultMaxTokens;
        if (fairUse) {
          call.outputLimit = requested ?? modelLimit;
        } else {
          // The reservation takes from the bucket (its refusals carry the bucket's headers).
          const taking = bucket;
          bucket = undefined;
          const admitted = await deps.budget.reserveCall(
            budgetSubject(principal),
            { price, inputTokens: { bound: bytes, count: () => countCallInput(call!, bytes) }, requestedOutputTokens: requested, modelOutputTokens: modelLimit },
            { fairUse: route.catalogId === 'house-fast', bucket: taking },
          );
          out.addHeaders(admitted.headers ?? {});
          reservation = admitted.reservation;
          call.outputLimit = admitted.outputTokens;
        }
      }
      if (bucket) {
        bucket = undefined;
        out.addHeaders(await deps.rateLimit(rateLimitSubject(principal)));
      }
      outcome = await exchange(call, route.engines, out, deps, startedAt, passHeadersOf(req.headers), settleOnce);
    } catch (thrown) {
      let error = asApiError(thrown);
      // A call refused before it took from its bucket still counts, and its answer says what is left (a spent
      // bucket answers 429 instead).
      if (bucket && principal) {
        try {
          out.addHeaders(await deps.rateLimit(rateLimitSubject(principal)));
        } catch (limited) {
          error = asApiError(limited);
        }
      }
      if (error.status >= 500) deps.logger.error({ requestId, route: req.url, err: error.cause ?? error }, 'model call failed');
      if (!out.started) out.refuse(error);
      else if (!res.destroyed) res.destroy();
      outcome = { status: error.status, usage: ZERO_USAGE, ttftMs: 0 };
    }
    await settleOnce(outcome);
  };
}

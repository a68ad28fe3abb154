import type { IncomingMessage } from 'node:http';
import type { CallerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { millicredits } from '@sbc/money';
import type { Authenticator, Principal } from './auth/authenticator';
import type { AuthorizeDeps } from './auth/authorize';
import type { BenchStep } from './config';
import type { Budget, Reservation } from './limits/budget';
import type { Bucket, RateLimiter } from './limits/rate-limit';
import type { CallSteps } from './model-calls/call-steps';
import { checkedCall } from './model-calls/read-call';
import type { EdgeMetrics } from './observability/edge-metrics';
import type { GenAiTelemetry } from './observability/genai-telemetry';

/**
 * What main.ts hands a caller's model calls and the edge's router, with the parts that SBC_BENCH_STEPS_OFF can
 * replace. The REST surface, MCP sessions and the edge's own calls (a judge's question) keep the full parts.
 */
interface SteppedParts {
  steps: CallSteps;
  metrics: EdgeMetrics;
  genai: GenAiTelemetry;
  authorize: AuthorizeDeps;
  rateLimit: RateLimiter;
  budget: Budget;
}

/**
 * For bench/gateway.mjs only (its step table), never in production: the parts of a model call with the named
 * steps replaced by no-ops, chosen once at start so the call path holds no check of its own. Each step, off:
 *
 * - `metrics`: no request count and duration (the router's `track` and its `close` listener), no model-call,
 *   upstream latency and first-token series, no route-attempt count, no upstream queue-wait observation (main.ts
 *   leaves the upstream client unobserved), and no GenAI span or histograms (the exchange runs bare).
 * - `record`: the record step does nothing: no budget settle, no correction of the key's tokens window, no usage
 *   event (and so none of the model-call series fed from it).
 * - `admit`: no credential lookup and no admit step. The credential is still checked as far as routing needs: the
 *   first call of a secret is authenticated for real, and later calls presenting the same secret as the last
 *   accepted one reuse its principal after a string comparison (no hash, no cache, no revocation seen); scopes
 *   are checked as before. No key-use time is kept. No request bucket or tokens window, no fair-use lookup and
 *   no budget reservation (hence no prompt token count); the call runs under its own output limit or the
 *   model's, and the record step has nothing to settle.
 * - `scans`: the body is read (within MAX_BODY_BYTES) and parsed with no UTF-8 validation, no nesting-depth scan
 *   and no walk for unsafe strings, and no hang-up listeners while it is read; the request id is a counter, the
 *   caller's `x-request-id` ignored; the exchange does not watch the caller's hang-up or the drain deadline.
 *
 * With no step named it returns `full` itself.
 */
export function withStepsOff(off: ReadonlySet<BenchStep>, full: SteppedParts): SteppedParts {
  if (off.size === 0) return full;
  const parts = { ...full, steps: { ...full.steps } };
  if (off.has('metrics')) {
    parts.metrics = { ...full.metrics, track() {}, observeCall() {}, routeAttempt() {} };
    parts.genai = { ...full.genai, traceCall: (_operation, _call, _targets, _prompt, work) => work(), attempt() {} };
  }
  if (off.has('record')) parts.steps.record = async () => undefined;
  if (off.has('admit')) {
    parts.authorize = {
      authenticator: lastAcceptedCredential(full.authorize.authenticator),
      keyUse: { ...full.authorize.keyUse, touch() {} },
    };
    parts.rateLimit = Object.assign(async () => ({}), { bucket: () => NO_BUCKET, take: async () => ({ headers: {} }) });
    parts.budget = {
      ...full.budget,
      reserveCall: async (_subject, call) => ({
        reservation: UNRESERVED,
        outputTokens: call.requestedOutputTokens ?? call.modelOutputTokens,
      }),
      fairUseLeft: async () => false,
    };
  }
  if (off.has('scans')) {
    let calls = 0;
    parts.steps.requestIdFor = () => `req_bench${++calls}`;
    parts.steps.readCall = readCallUnscanned;
    parts.steps.watchCaller = () => stopWatchingNothing;
  }
  return parts;
}

const stopWatchingNothing = () => undefined;

/** A bucket that counts nothing and answers no headers. */
const NO_BUCKET: Bucket = { ops: () => [], answer: () => ({ headers: {}, undo: [] }) };

/** A reservation that held nothing: settling it is a no-op, and it caps no charge. */
const UNRESERVED: Reservation = {
  reservedMilli: millicredits(Number.MAX_SAFE_INTEGER),
  settle: async () => undefined,
};

/** The real lookup for a secret unlike the last one it accepted; that one's principal again, without a lookup. */
function lastAcceptedCredential(authenticator: Authenticator): Authenticator {
  let last: { secret: string; principal: Principal } | undefined;
  return {
    ...authenticator,
    async authenticate(secret, requestId) {
      if (last?.secret === secret) return last.principal;
      const principal = await authenticator.authenticate(secret, requestId);
      last = { secret, principal };
      return principal;
    },
  };
}

/** The body read and parsed with none of readJsonBody's scans; a body that is not JSON is still a 400. */
async function readCallUnscanned(
  req: IncomingMessage,
  adapter: CallerDialect,
  maxBodyBytes: number,
): Promise<{ call: ReturnType<typeof checkedCall>; bytes: number }> {
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBodyBytes) reject(new ApiError('request_too_large', `The body is over ${maxBodyBytes} bytes.`));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes)));
  });
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('invalid_request', 'The request body is not valid JSON.', { param: 'body' });
  }
  return { call: checkedCall(adapter, value, false), bytes: body.length };
}

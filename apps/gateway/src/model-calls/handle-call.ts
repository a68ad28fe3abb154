import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerDialect, ZERO_USAGE, type CallerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import { authorizeRequest, type AuthorizeDeps } from '../auth/authorize';
import { captureCall } from '../capture/call-capture';
import type { CaptureStore } from '../capture/capture-store';
import { requestIdFor } from '../http/request-id';
import type { GenAiTelemetry } from '../observability/genai-telemetry';
import { replayCachedReply } from '../response-cache/replay';
import type { ResponseCache } from '../response-cache/response-cache';
import { alongsideKept, type ResponseCall, type ResponsesState } from '../responses-state/responses-state';
import type { HouseEngines, ProviderEngines } from '../routing/engines';
import type { RoutePolicy } from '../routing/target-picker';
import type { RoutingTables } from '../routing/routing-tables';
import type { Target } from '../routing/targets';
import { passHeadersOf, type UpstreamClient } from '../upstream/client';
import type { UsageEmitter } from '../usage/usage-events';
import { Admission, type AdmitDeps } from './admit';
import { CallResponse } from './call-response';
import { exchange, type CallOutcome } from './exchange';
import { checkModelKind } from './model-kind';
import { parseRequestFor, promptOf, type CallerCall } from './plan';
import { readCall } from './read-call';
import { resolveCallRoute } from './route-call';
import { settle, type CallRecord } from './settle';

export interface ModelCallDeps extends AuthorizeDeps, AdmitDeps {
  baseUrl: string;
  maxBodyBytes: number;
  routing: RoutingTables;
  house: HouseEngines;
  providers: ProviderEngines;
  upstream: UpstreamClient;
  route: RoutePolicy;
  usage: UsageEmitter;
  /** The exact response cache, in front of the exchange step (only calls that opt in reach its store). */
  responseCache: ResponseCache;
  /** Stored OpenAI Responses: read before the targets when a call continues one, written when a call keeps one. */
  responsesState: ResponsesState;
  logger: Logger;
  /** The GenAI span and histograms around each call's exchange. */
  genai: Pick<GenAiTelemetry, 'traceCall'>;
  /** The playground's captures of upstream exchanges (asked for by a session's `x-sbc-capture: 1`). */
  captures: CaptureStore;
  /** Passed to exchange: streams still running when the drain time is up end with an error event. */
  drainDeadline?: AbortSignal;
}

/** The model routes answered on the edge's lean path (no Express), by path. */
export const MODEL_CALL_ROUTES: ReadonlyMap<string, CallerDialect> = new Map([
  ['/v1/chat/completions', callerDialect('chat')],
  ['/v1/responses', callerDialect('responses')],
  ['/v1/messages', callerDialect('messages')],
  ['/v1/embeddings', callerDialect('embeddings')],
]);

/**
 * One model call in five steps: authorize (cached key) → read the body → resolve the model and its fallbacks to
 * targets (house models without any lookup; others from the cached routing table) → exchange with the targets,
 * each admitted as it is tried (request bucket, fair use, budget), unless the response cache holds the reply →
 * record (settle the budget, emit the usage event). Nothing here waits on a database.
 */
export function createModelCallHandler(deps: ModelCallDeps) {
  return async function handleModelCall(
    req: IncomingMessage,
    res: ServerResponse,
    adapter: CallerDialect,
  ): Promise<void> {
    const record = startRecord(req, adapter);
    const out = new CallResponse(res, adapter, record.requestId, deps.baseUrl);
    let admission: Admission | undefined;
    // The deps the call's steps use: watched by a capture when a signed-in session asked for one.
    let callDeps = deps;
    // Once per call: before the last bytes of a reply (exchange), or after a refusal or a hang-up here.
    let recorded: Promise<void> | undefined;
    // The stored-Responses part of a call that keeps or continues a response; its write goes with the record.
    let kept: ResponseCall | undefined;
    const recordOnce = (outcome: CallOutcome) =>
      (recorded ??= alongsideKept(settle(callDeps, { fairUse: false, ...record, ...admission?.terms, outcome }), kept));
    let outcome: CallOutcome;
    try {
      const principal = (record.principal = await authorizeRequest(deps, req.headers, record.requestId, [
        'gateway:invoke',
      ]));
      callDeps = captureCall(deps, req.headers, principal, record.requestId);
      admission = new Admission(deps, principal, out);
      const { call, bytes: bodyBytes } = await readCall(req, adapter, deps.maxBodyBytes);
      record.call = call;
      const { targets } = await resolveCallRoute(deps, principal, call.callerModel, record.requestId, call.fallbacks);
      checkModelKind(call, targets);
      parseRequestFor(call, targets);
      kept = deps.responsesState.forCall(principal, call, record.requestId);
      // A continued response's context joins the prompt, which admission bounds by its bytes.
      const bytes = bodyBytes + (kept ? await kept.expand() : 0);
      outcome = await answer(
        deps,
        { principal, call, targets, admission, bytes, out, callDeps, record, recordOnce },
        req,
      );
    } catch (thrown) {
      outcome = await refuse(deps, out, admission, thrown, req.url);
    }
    await recordOnce(outcome);
  };
}

type OpenRecord = Omit<CallRecord, 'outcome' | 'fairUse'>;

/** What the exchange step works on: the call as read and resolved, and where its reply and record go. */
interface ResolvedCall {
  principal: Principal;
  call: CallerCall;
  targets: readonly Target[];
  admission: Admission;
  bytes: number;
  out: CallResponse;
  /** The deps the exchange uses: watched by a capture when a signed-in session asked for one. */
  callDeps: ModelCallDeps;
  record: OpenRecord;
  recordOnce: (outcome: CallOutcome) => Promise<void>;
}

/**
 * The exchange step: the response cache's reply when it holds one (a hit takes from the request bucket and
 * reserves nothing: it is charged nothing), else the targets' in turn, traced as one GenAI call.
 */
async function answer(deps: ModelCallDeps, resolved: ResolvedCall, req: IncomingMessage): Promise<CallOutcome> {
  const { principal, call, targets, admission, bytes, out, callDeps, record, recordOnce } = resolved;
  const cache = deps.responseCache.forCall(principal, req.headers, call, targets, record.requestId, out);
  const cached = cache && (await cache.lookup(out));
  if (cached) {
    await admission.takeWithoutTarget();
    return replayCachedReply(call, cached, out, record.startedAt, recordOnce);
  }
  const embedding = call.adapter.modelKind === 'embedding';
  return deps.genai.traceCall(
    embedding ? 'embeddings' : 'chat',
    call,
    targets,
    () => (embedding ? undefined : promptOf(call)),
    () =>
      exchange(
        call,
        targets,
        (target) => admission.admit(call, target, bytes),
        out,
        callDeps,
        record.startedAt,
        passHeadersOf(req.headers),
        recordOnce,
        cache,
      ),
  );
}

function startRecord(req: IncomingMessage, adapter: CallerDialect): OpenRecord {
  const requestId = requestIdFor(req.headers['x-request-id']);
  return {
    requestId,
    atMs: Date.now(),
    startedAt: performance.now(),
    dialect: adapter.name,
    sessionId: req.headers['x-session-id'],
  };
}

/** Answers a call the edge refused or failed before its reply began (after that, the caller's socket is reset). */
async function refuse(
  deps: ModelCallDeps,
  out: CallResponse,
  admission: Admission | undefined,
  thrown: unknown,
  route: string | undefined,
): Promise<CallOutcome> {
  let error = ApiError.from(thrown);
  try {
    await admission?.takeWithoutTarget();
  } catch (limited) {
    error = ApiError.from(limited);
  }
  if (error.status >= 500)
    deps.logger.error({ requestId: out.requestId, route, err: error.cause ?? error }, 'model call failed');
  if (!out.started) out.refuse(error);
  else if (!out.res.destroyed) out.res.destroy();
  return { status: error.status, attempts: 0, usage: ZERO_USAGE, ttftMs: 0 };
}

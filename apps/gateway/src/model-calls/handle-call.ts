import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { callerDialect, ZERO_USAGE, type CallerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import { authorizeRequest, type AuthorizeDeps } from '../auth/authorize';
import type { CallTools } from '../mcp/call-tools';
import type { GenAiTelemetry } from '../observability/genai-telemetry';
import type { HouseEngines, ProviderEngines } from '../routing/engines';
import type { RoutePolicy } from '../routing/target-picker';
import type { RoutingTables } from '../routing/routing-tables';
import type { Target } from '../routing/targets';
import type { BetaRefusals } from '../upstream/beta-refusals';
import { passHeadersOf, type UpstreamClient } from '../upstream/client';
import { lineEventIdOf } from '../usage/line-event-id';
import type { UsageEmitter } from '../usage/usage-events';
import { Admission, type AdmissionTerms, type AdmitDeps } from './admit';
import { beforeTarget, hookPartsIn, type CallHook } from './call-hooks';
import type { CallSteps } from './call-steps';
import type { CallOutcome } from './call-outcome';
import { CallResponse } from './call-response';
import { exchange } from './exchange';
import type { Exchange } from './exchange-call';
import { answerFromHook } from './hook-answer';
import { answerWithMcpTools } from './mcp-rounds';
import { checkModelKind } from './model-kind';
import { bodyOf, parseRequestFor, promptOf, type CallerCall } from './plan';
import { resolveCallRoute } from './route-call';
import type { CallRecord } from './settle';

export interface ModelCallDeps extends AuthorizeDeps, AdmitDeps {
  baseUrl: string;
  maxBodyBytes: number;
  routing: RoutingTables;
  house: HouseEngines;
  providers: ProviderEngines;
  upstream: UpstreamClient;
  route: RoutePolicy;
  /** What this edge's Anthropic-dialect targets refused in `anthropic-beta` (upstream/beta-refusals.ts). */
  betas: BetaRefusals;
  usage: UsageEmitter;
  /**
   * The step socket's hooks, in order (call-hooks.ts), chosen in main.ts: whatever refuses, rewrites, answers or
   * records calls without being the call; each takes part only in the calls it is in play for.
   */
  hooks: readonly CallHook[];
  logger: Logger;
  /** The GenAI span and histograms around each call's exchange. */
  genai: Pick<GenAiTelemetry, 'traceCall'>;
  /** A model call's remote MCP tools, run by the gateway on the caller's tool servers (mcp-rounds.ts). */
  mcpTools: CallTools;
  /** The most model calls one request makes while the gateway runs its MCP tools (MCP_MAX_TOOL_ROUNDS). */
  maxToolRounds: number;
  /** Passed to exchange: streams still running when the drain time is up end with an error event. */
  drainDeadline?: AbortSignal;
  /** The request id, the body's read, the caller's watch and the record step (call-steps.ts), chosen in main.ts. */
  steps: CallSteps;
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
 * targets (house models without any lookup; others from the cached routing table) → the hooks before the first
 * target, then the exchange with the targets, each admitted as it is tried (request bucket, fair use, budget),
 * unless a hook answered → record (settle the budget, emit the usage event). Nothing here waits on a database.
 */
export function createModelCallHandler(deps: ModelCallDeps) {
  const { requestIdFor, readCall, record: recordStep } = deps.steps;
  return async function handleModelCall(
    req: IncomingMessage,
    res: ServerResponse,
    adapter: CallerDialect,
  ): Promise<void> {
    const record = startRecord(req, adapter, requestIdFor);
    const out = new CallResponse(res, adapter, record.requestId, deps.baseUrl);
    let admission: Admission | undefined;
    // Once per call: before the last bytes of a reply (exchange), or after a refusal or a hang-up here.
    let recorded: Promise<void> | undefined;
    const recordOnce = (outcome: CallOutcome, terms: AdmissionTerms | undefined = admission?.terms) =>
      (recorded ??= recordStep(deps, { fairUse: false, ...record, ...terms, outcome }));
    let outcome: CallOutcome;
    try {
      const principal = (record.principal = await authorizeRequest(deps, req.headers, record.requestId, [
        'gateway:invoke',
      ]));
      record.lineEventId = lineEventIdOf(principal.key, record.requestId);
      admission = new Admission(deps, principal, out);
      const { call, bytes } = await readCall(req, adapter, deps.maxBodyBytes);
      record.call = call;
      const { targets } = await resolveCallRoute(deps, principal, call.callerModel, record.requestId, call.fallbacks);
      checkModelKind(call, targets);
      const headers = req.headers;
      outcome = await answer(deps, { principal, call, targets, admission, bytes, out, headers, record, recordOnce });
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
  headers: IncomingHttpHeaders;
  record: OpenRecord;
  recordOnce: (outcome: CallOutcome, terms?: AdmissionTerms) => Promise<void>;
}

/**
 * The hooks in play before the first target (call-hooks.ts), then the exchange with the targets, traced as one
 * GenAI call; or the answer a hook gave (it takes from the request bucket and reserves nothing: it is charged
 * nothing). A call no hook is in play for goes straight to its targets.
 */
async function answer(deps: ModelCallDeps, resolved: ResolvedCall): Promise<CallOutcome> {
  const { call, targets, admission, out, record } = resolved;
  const hooks = (record.hooks = hookPartsIn(deps.hooks, resolved));
  const answered = hooks && (await beforeTarget(hooks, resolved));
  const x: Exchange = {
    call,
    targets,
    // Read when a target is admitted: a hook before it may have added to the prompt.
    admit: (target) => admission.admit(call, target, resolved.bytes),
    out,
    startedAt: record.startedAt,
    passHeaders: passHeadersOf(resolved.headers),
    beforeEnd: resolved.recordOnce,
    hooks,
  };
  if (answered) {
    await admission.takeWithoutTarget();
    return answerFromHook(x, answered);
  }
  // A call naming remote MCP tools is answered in rounds, the gateway running the tools (mcp-rounds.ts).
  if (call.adapter.asksForMcp?.(bodyOf(call))) {
    const { principal, bytes } = resolved;
    const mcp = { principal, admission, bytes, atMs: record.atMs, sessionId: record.sessionId };
    return deps.genai.traceCall(
      'chat',
      call,
      targets,
      () => promptOf(call),
      () => answerWithMcpTools(deps, x, mcp),
    );
  }
  parseRequestFor(call, targets);
  const embedding = call.adapter.modelKind === 'embedding';
  return deps.genai.traceCall(
    embedding ? 'embeddings' : 'chat',
    call,
    targets,
    () => (embedding ? undefined : promptOf(call)),
    () => exchange(x, deps),
  );
}

function startRecord(
  req: IncomingMessage,
  adapter: CallerDialect,
  requestIdFor: CallSteps['requestIdFor'],
): OpenRecord {
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
  // A call shed while the spool is nearly full is counted by its metric; one error line each would flood the log
  // through the very outage that sheds them.
  if (error.status >= 500 && error.code !== 'usage_unrecordable')
    deps.logger.error({ requestId: out.requestId, route, err: error.cause ?? error }, 'model call failed');
  if (!out.started) out.refuse(error);
  else if (!out.res.destroyed) out.res.destroy();
  return { status: error.status, attempts: 0, usage: ZERO_USAGE, ttftMs: 0 };
}

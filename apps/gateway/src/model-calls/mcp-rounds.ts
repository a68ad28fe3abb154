import {
  upstreamAdapter,
  UpstreamError,
  ZERO_USAGE,
  type ChatRequest,
  type ChatResponse,
  type McpItem,
  type Message,
  type ToolCallBlock,
  type ToolChoice,
  type Usage,
} from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Principal } from '../auth/authenticator';
import type { CallTools, CallToolbox } from '../mcp/call-tools';
import type { Target } from '../routing/targets';
import { isAbort } from '../upstream/client';
import { lineEventIdOf, roundEventIdOf, toolCallEventIdOf } from '../usage/line-event-id';
import { Admission, type AdmitDeps } from './admit';
import { neutralRequestOf, watchedUpstream } from './call-hooks';
import type { CallOutcome } from './call-outcome';
import { dispatch, type DispatchDeps, type InFlight } from './dispatch';
import { watchCaller } from './caller-watch';
import { nameDroppedFields, routeHeaders } from './exchange';
import { servedOutcome, type Exchange } from './exchange-call';
import { deliverReply } from './hook-answer';
import type { CallerCall } from './plan';
import { settle, type SettleDeps } from './settle';
import { DRAINED } from './stream-relay';

// A model call whose caller named remote MCP tools (ChatRequest.mcp): the gateway offers the tools to the target as
// functions, runs the calls the model makes on the caller's tool servers, and calls the model again with their
// results, until it answers (docs/mcp.md "MCP tools in model calls"). Every round is a model call of its own:
// admitted on its targets (request bucket, budget), and settled with a usage row; the last one is the call's own
// record. The rounds are buffered: the caller gets the final reply, whole or as one stream of events, with what
// was run shown before it. A batch line's rounds and tool calls take event ids made from the line's id (its last
// round the line's id itself), so a line called again after a crash is billed once, every round of it.

export type McpRoundsDeps = DispatchDeps &
  AdmitDeps &
  SettleDeps & {
    /** The caller's MCP tools, resolved, offered and run (mcp/call-tools.ts). */
    mcpTools: CallTools;
    /** The most model calls one request makes while the gateway runs its MCP tools (MCP_MAX_TOOL_ROUNDS). */
    maxToolRounds: number;
    drainDeadline?: AbortSignal;
  };

/** What the rounds need of the call besides its exchange. */
export interface McpCall {
  principal: Principal;
  /** The call's own admission: its first round is admitted under it, each later one under one of its own. */
  admission: Admission;
  /** The body's size, which bounds the first round's prompt tokens. */
  bytes: number;
  atMs: number;
  sessionId: string | string[] | undefined;
}

/** Answers the call after as many rounds as its MCP tools take; the record of its last round is the call's. */
export async function answerWithMcpTools(deps: McpRoundsDeps, x: Exchange, mcp: McpCall): Promise<CallOutcome> {
  const request = neutralRequestOf(x.call);
  // Every round is sent the neutral request with the tools offered: never the caller's body, which names the servers.
  x.call.translated = true;
  const toolbox = await deps.mcpTools.open(
    { principal: mcp.principal, requestId: x.out.requestId },
    request.mcp ?? [],
    request.tools,
  );
  // A caller that hangs up cancels the tool calls under way at their servers.
  const gone = new AbortController();
  const onClose = () => {
    if (!x.out.res.writableFinished) gone.abort();
  };
  x.out.res.on('close', onClose);
  try {
    return await runRounds(deps, x, mcp, request, toolbox, gone.signal);
  } finally {
    x.out.res.off('close', onClose);
    await toolbox.close();
  }
}

async function runRounds(
  deps: McpRoundsDeps,
  x: Exchange,
  mcp: McpCall,
  request: ChatRequest,
  toolbox: CallToolbox,
  signal: AbortSignal,
): Promise<CallOutcome> {
  const { call, out } = x;
  const own = new Set((request.tools ?? []).map((tool) => tool.name));
  const base: ChatRequest = { ...request, stream: false, tools: [...(request.tools ?? []), ...toolbox.tools] };
  delete base.mcp;
  const offeredBytes = Buffer.byteLength(JSON.stringify(toolbox.tools));
  const dispatchDeps = x.hooks ? { ...deps, upstream: watchedUpstream(deps.upstream, x.hooks) } : deps;
  const items: McpItem[] = [...toolbox.listings];
  const turns: Message[] = [];
  let usage: Usage = ZERO_USAGE;
  let attempts = 0;
  const line = lineEventIdOf(mcp.principal.key, out.requestId);
  for (let round = 1; ; round++) {
    const roundCall: CallerCall = {
      adapter: call.adapter,
      body: call.body,
      callerModel: call.callerModel,
      fallbacks: call.fallbacks,
      stream: false,
      includeUsage: false,
      translated: true,
      request: {
        ...base,
        messages: [...base.messages, ...turns],
        toolChoice: round === 1 ? base.toolChoice : laterChoice(base.toolChoice),
      },
    };
    const admission = round === 1 ? mcp.admission : new Admission(deps, mcp.principal, out);
    const bytes = mcp.bytes + offeredBytes + (turns.length > 0 ? Buffer.byteLength(JSON.stringify(turns)) : 0);
    const atMs = Date.now();
    const startedAt = performance.now();
    const state: InFlight = { callerGone: out.res.destroyed, attempts: 0, requestId: out.requestId };
    const unwatch = watchCaller(out, state, deps.drainDeadline);
    let reply: ChatResponse;
    let target: Target;
    try {
      const admit = (candidate: Target) => admission.admit(roundCall, candidate, bytes);
      const dispatched = await dispatch(roundCall, x.targets, dispatchDeps, state, x.passHeaders, admit);
      out.addHeaders(routeHeaders({ ...state, attempts: attempts + state.attempts }));
      if (dispatched.kind === 'failed') {
        const outcome = servedOutcome(state, dispatched.failure.status, ZERO_USAGE, 0);
        await x.beforeEnd(outcome, admission.terms);
        out.fail(dispatched.failure, {
          ...(dispatched.exhausted ? { 'x-should-retry': 'false' } : {}),
          ...dispatched.headers,
        });
        return outcome;
      }
      target = dispatched.target;
      reply = upstreamAdapter(target.engine.dialect).parseReply(await dispatched.reply.json(), roundCall.request);
    } catch (error) {
      return await endedEarly(x, state, admission, error);
    } finally {
      unwatch();
    }
    attempts += state.attempts;
    usage = addUsage(usage, reply.usage);
    const ttftMs = Math.max(1, Math.round(performance.now() - startedAt));
    const outcome = servedOutcome(state, 200, reply.usage, ttftMs, reply.stopReason);
    const calls = reply.content.filter((block): block is ToolCallBlock => block.type === 'tool_call');
    const gateway = calls.filter((block) => !own.has(block.name));
    const bounded = gateway.length > 0 && round >= deps.maxToolRounds;
    // A call to one of the caller's own functions is the caller's to answer: the round is the last one.
    const last = gateway.length === 0 || bounded || gateway.length < calls.length;
    if (bounded) {
      const reason = `Not run: the request reached the gateway's bound of ${deps.maxToolRounds} model calls.`;
      items.push(...gateway.map((block) => toolbox.notRun(block, reason)));
    } else if (gateway.length > 0) {
      const ran = await Promise.all(
        gateway.map((block, index) =>
          toolbox.run(block, signal, line === undefined ? undefined : toolCallEventIdOf(line, round, index)),
        ),
      );
      items.push(...ran.map((done) => done.item));
      turns.push(
        { role: 'assistant', content: reply.content },
        { role: 'user', content: ran.map((done) => done.result) },
      );
    }
    if (!last && out.res.destroyed) {
      // The caller left while the tools ran: this round is the call's last, billed as the upstream answered it.
      const left = { ...outcome, status: 499 };
      await x.beforeEnd(left, admission.terms);
      return left;
    }
    if (!last) {
      // One literal that begins with keys of its own, as own-call.ts's.
      await settle(deps, {
        principal: mcp.principal,
        call: roundCall,
        ...admission.terms,
        outcome,
        requestId: out.requestId,
        atMs,
        startedAt,
        dialect: call.adapter.name,
        sessionId: mcp.sessionId,
        lineEventId: line === undefined ? undefined : roundEventIdOf(line, round),
      });
      continue;
    }
    call.callerModel = roundCall.callerModel;
    out.addHeaders({ 'x-sbc-mcp-rounds': String(round) });
    nameDroppedFields(x, target);
    const content = reply.content.filter((block) => block.type !== 'tool_call' || own.has(block.name));
    const final: ChatResponse = { ...reply, model: call.callerModel, content, usage, mcp: items };
    return deliverReply(x, final, outcome, admission.terms);
  }
}

/** A choice that forces a tool holds for the first round only: kept, it would force a call in every round. */
function laterChoice(choice: ToolChoice | undefined): ToolChoice | undefined {
  return choice?.type === 'required' || choice?.type === 'tool' ? { type: 'auto' } : choice;
}

function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
  if (a.reasoningTokens !== undefined || b.reasoningTokens !== undefined)
    sum.reasoningTokens = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  return sum;
}

/**
 * A round that ended without a reply: the drain deadline (503), the caller hanging up (499), or a reply that was
 * not one (the upstream's failure), each recorded as the call's last round; a refusal (402, 429) is recorded and
 * thrown, to be answered as any call's.
 */
async function endedEarly(x: Exchange, state: InFlight, admission: Admission, error: unknown): Promise<CallOutcome> {
  const { out } = x;
  const outcome = servedOutcome(state, 499, ZERO_USAGE, 0);
  const failure = error instanceof UpstreamError && !isAbort(error) ? error.failure : undefined;
  if (state.drained && !state.callerGone && !out.started) {
    outcome.status = DRAINED.status;
    await x.beforeEnd(outcome, admission.terms);
    out.fail(DRAINED);
  } else if (isAbort(error) || state.callerGone) {
    await x.beforeEnd(outcome, admission.terms);
    if (!out.res.destroyed) out.res.destroy();
  } else if (failure) {
    outcome.status = failure.status;
    await x.beforeEnd(outcome, admission.terms);
    out.fail(failure);
  } else {
    await x.beforeEnd({ ...outcome, status: ApiError.from(error).status }, admission.terms);
    throw error;
  }
  return outcome;
}

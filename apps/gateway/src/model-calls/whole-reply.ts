import {
  upstreamAdapter,
  UpstreamError,
  ZERO_USAGE,
  type AssistantBlock,
  type ChatResponse,
  type StopReason,
  type Usage,
} from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Engine } from '../routing/engines';
import type { Target } from '../routing/targets';
import { isAbort, type UpstreamCall } from '../upstream/client';
import { hooksDone, replyThroughHooks, showSentBody, type HookPart } from './call-hooks';
import type { CallOutcome } from './call-outcome';
import type { InFlight } from './dispatch';
import { servedOutcome, type Exchange } from './exchange-call';
import { passthroughTo, type CallerCall } from './plan';

/** A non-streamed reply as the caller will receive it, or the refusal a hook answered it with. */
interface Rendered {
  body: unknown;
  usage: Usage;
  stopReason?: StopReason;
  completion: () => AssistantBlock[];
  refusal?: ApiError;
}

/**
 * Answers with the upstream's whole reply in the caller's dialect, after the call's reply hooks. A body that
 * broke off, or a 200 whose body is not a reply (an error object, no choices, not JSON), is the upstream's
 * failure; a hook's refusal is the answer, billed for the reply it refused.
 */
export async function answerWhole(
  x: Exchange,
  dispatched: { target: Target; reply: UpstreamCall },
  inFlight: InFlight,
): Promise<CallOutcome> {
  let rendered: Rendered;
  try {
    rendered = await renderWhole(x.call, dispatched.target.engine, await dispatched.reply.json(), x.hooks);
  } catch (error) {
    const failure = error instanceof UpstreamError && !isAbort(error) ? error.failure : undefined;
    if (!failure || inFlight.callerGone) throw error;
    x.out.fail(failure);
    return servedOutcome(inFlight, failure.status, ZERO_USAGE, 0);
  }
  const outcome = servedOutcome(
    inFlight,
    rendered.refusal?.status ?? 200,
    rendered.usage,
    Math.max(1, Math.round(performance.now() - x.startedAt)),
    rendered.stopReason,
    rendered.completion,
  );
  if (x.hooks && !rendered.refusal) {
    outcome.responseId = idOf(rendered.body);
    showSentBody(x.hooks, rendered.body);
  }
  await x.beforeEnd(outcome);
  if (rendered.refusal) x.out.refuse(rendered.refusal);
  else x.out.json(200, rendered.body);
  hooksDone(x.hooks, outcome);
  return outcome;
}

/** The `id` of a rendered reply, when it has one. */
export function idOf(body: unknown): string | undefined {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The reply in the caller's dialect. With reply hooks, they see it in neutral form first; a reply they left as it
 * was is still passed through as the engine sent it when the engine speaks the caller's dialect.
 */
async function renderWhole(
  call: CallerCall,
  engine: Engine,
  raw: unknown,
  hooks: readonly HookPart[] | undefined,
): Promise<Rendered> {
  // Embeddings have no neutral reply: hooks see their input only.
  if (!hooks?.some((part) => part.reply) || call.adapter.modelKind !== 'chat') return renderReply(call, engine, raw);
  // Read before the renderer, which may take the upstream's body as the caller's.
  const neutral = upstreamAdapter(engine.dialect).parseReply(raw, call.request);
  const usage = neutral.usage;
  let reply: ChatResponse;
  try {
    reply = await replyThroughHooks(hooks, neutral);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { body: undefined, usage, stopReason: neutral.stopReason, completion: () => [], refusal: error };
  }
  if (reply === neutral) return renderReply(call, engine, raw, neutral);
  const body = call.adapter.renderReply({ ...reply, model: call.callerModel }, call.request);
  return { body, usage: reply.usage, stopReason: reply.stopReason, completion: () => reply.content };
}

function renderReply(call: CallerCall, engine: Engine, raw: unknown, parsed?: ChatResponse): Rendered {
  const passthrough = passthroughTo(call, engine);
  if (passthrough && raw && typeof raw === 'object') {
    // The engine's reply is in the caller's dialect: parsed into blocks only if telemetry asks for them.
    const completion = () => (parsed ?? upstreamAdapter(engine.dialect).parseReply(raw, call.request)).content;
    const { body, usage, stopReason } = passthrough.reply(raw as Record<string, unknown>, call.callerModel);
    return { body, usage, stopReason, completion };
  }
  const reply = parsed ? { ...parsed } : upstreamAdapter(engine.dialect).parseReply(raw, call.request);
  reply.model = call.callerModel;
  const body = call.adapter.renderReply(reply, call.request);
  return { body, usage: reply.usage, stopReason: reply.stopReason, completion: () => reply.content };
}

import { encodeSse, type ChatResponse } from '@sbc/dialects';
import type { CallResponse } from '../model-calls/call-response';
import type { CallOutcome } from '../model-calls/exchange';
import { bodyOf, type CallerCall } from '../model-calls/plan';
import { eventsOfReply } from './cached-reply';

/**
 * Answers a call from a cached reply in the caller's dialect: the reply's body, or its whole stream of events at
 * once. Nothing upstream is tried and nothing is charged; the usage event (cache_hit) is durable before the
 * last bytes, as for any call.
 */
export async function replayCachedReply(
  call: CallerCall,
  cached: ChatResponse,
  out: CallResponse,
  startedAt: number,
  beforeEnd: (outcome: CallOutcome) => Promise<void>,
): Promise<CallOutcome> {
  // The Responses dialect echoes the request; a call whose engines all take its body as sent has not parsed it.
  call.request ??= call.adapter.parse(bodyOf(call));
  const reply: ChatResponse = { ...cached, model: call.callerModel };
  const outcome: CallOutcome = {
    status: 200,
    attempts: 0,
    usage: reply.usage,
    ttftMs: Math.max(1, Math.round(performance.now() - startedAt)),
    stopReason: reply.stopReason,
    cacheHit: true,
  };
  if (!call.stream) {
    const body = call.adapter.renderReply(reply, call.request);
    call.replyTap?.body(body);
    await beforeEnd(outcome);
    out.json(200, body);
    return outcome;
  }
  const renderer = call.adapter.streamRenderer({
    model: call.callerModel,
    includeUsage: call.includeUsage,
    requestId: out.requestId,
    request: call.request,
  });
  let frames = '';
  for (const event of eventsOfReply(reply))
    for (const frame of renderer.render(event)) {
      call.replyTap?.frame(frame);
      frames += encodeSse(frame);
    }
  await beforeEnd(outcome);
  if (out.res.destroyed) return { ...outcome, status: 499 };
  out.openStream();
  out.res.end(frames);
  return outcome;
}

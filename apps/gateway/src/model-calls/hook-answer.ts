import { encodeSse, type ChatResponse } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { AdmissionTerms } from './admit';
import { EventChain, hooksDone, replyThroughHooks, sentWatchersOf, showSentBody, type HookAnswer } from './call-hooks';
import type { CallOutcome } from './call-outcome';
import type { Exchange } from './exchange-call';
import { responseIdOf, renderedEvents } from './hooked-stream';
import { bodyOf } from './plan';
import { eventsOfReply } from './reply-events';
import { idOf } from './whole-reply';

/**
 * Answers a call with the reply a before-target hook gave (call-hooks.ts), in the caller's dialect: its body, or
 * its whole stream of events at once, through the reply hooks of the parts before the one that answered. Nothing
 * upstream is tried and nothing is charged; the usage event is durable before the last bytes, as for any call.
 */
export async function answerFromHook(x: Exchange, answer: HookAnswer): Promise<CallOutcome> {
  const { call } = x;
  // The Responses dialect echoes the request; a call whose engines all take its body as sent has not parsed it.
  call.request ??= call.adapter.parse(bodyOf(call));
  const reply: ChatResponse = { ...answer.reply, model: call.callerModel };
  const outcome: CallOutcome = {
    status: 200,
    attempts: 0,
    usage: reply.usage,
    ttftMs: Math.max(1, Math.round(performance.now() - x.startedAt)),
    stopReason: reply.stopReason,
    cacheHit: answer.cacheHit,
  };
  return deliverReply(x, reply, outcome);
}

/**
 * A whole neutral reply to the caller in its dialect: its body, or its whole stream of events at once, through the
 * call's reply hooks. `outcome` is what the call's record settles (under `terms` when not the call's own
 * admission), resolved before the last bytes go out.
 */
export async function deliverReply(
  x: Exchange,
  reply: ChatResponse,
  outcome: CallOutcome,
  terms?: AdmissionTerms,
): Promise<CallOutcome> {
  const { call, out } = x;
  if (!call.stream) {
    let body: unknown;
    try {
      const final = x.hooks ? await replyThroughHooks(x.hooks, reply) : reply;
      body = call.adapter.renderReply(final, call.request);
      outcome.responseId = idOf(body);
      showSentBody(x.hooks, body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      outcome.status = error.status;
      await x.beforeEnd(outcome, terms);
      out.refuse(error);
      return outcome;
    }
    await x.beforeEnd(outcome, terms);
    out.json(200, body);
    hooksDone(x.hooks, outcome);
    return outcome;
  }
  const chain = x.hooks && EventChain.of(x.hooks);
  const frames = renderedEvents(call, out.requestId, eventsOfReply(reply), chain);
  if (chain?.halted) outcome.status = chain.halted.status;
  outcome.responseId = responseIdOf(frames);
  for (const watcher of sentWatchersOf(x.hooks) ?? []) watcher.frames(frames);
  let text = '';
  for (const frame of frames) text += encodeSse(frame);
  await x.beforeEnd(outcome, terms);
  if (out.res.destroyed) return { ...outcome, status: 499 };
  out.openStream();
  out.res.end(text);
  hooksDone(x.hooks, outcome);
  return outcome;
}

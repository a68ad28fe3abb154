import type { RequestHandler } from 'express';
import { fromChatCompletions } from '../generation/conversation';
import { planReply, type ReplyPlan } from '../generation/reply';
import { estimateInputTokens } from '../generation/tokens';
import { extraUsageOf, type ExtraUsage } from '../generation/usage-directive';
import { newId, unixSeconds } from '../wire/ids';
import { waitForWholeReply } from '../wire/pacing';
import type { SimResponse } from '../wire/response';
import { chatRequestSchema, parseRequest } from '../wire/requests';
import { checkOpenAiRules } from '../wire/strict-rules';
import { beginCall, streamReply, type RouteDeps } from './call';

/** OpenAI Chat Completions: `POST /v1/chat/completions` (dialects.md §2). */

const FINGERPRINT = 'fp_sim_upstream';

interface Head {
  id: string;
  created: number;
  model: string;
}

function finishReason(plan: ReplyPlan): 'stop' | 'length' | 'tool_calls' {
  if (plan.kind === 'tool') return 'tool_calls';
  return plan.finish === 'length' ? 'length' : 'stop';
}

/** Cache reads and writes are part of `prompt_tokens`, reasoning part of `completion_tokens` (dialects.md §2). */
function chatUsage(estimate: number, pieces: number, extra: ExtraUsage) {
  const promptTokens = estimate + extra.cacheRead + extra.cacheWrite;
  const completionTokens = pieces + extra.reasoning;
  const cacheWrite = extra.cacheWrite > 0 ? { cache_write_tokens: extra.cacheWrite } : {};
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: extra.cacheRead, ...cacheWrite, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: extra.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function completion(head: Head, plan: ReplyPlan, callId: string, usage: ReturnType<typeof chatUsage>) {
  const message =
    plan.kind === 'tool'
      ? {
          role: 'assistant',
          content: null,
          refusal: null,
          annotations: [],
          tool_calls: [{ id: callId, type: 'function', function: { name: plan.name, arguments: plan.arguments } }],
        }
      : { role: 'assistant', content: plan.pieces.join(''), refusal: null, annotations: [] };
  return {
    ...head,
    object: 'chat.completion',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(plan) }],
    usage,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
}

export function chatCompletionsRoute(deps: RouteDeps): RequestHandler {
  return (req, res) => answerChatCompletions(req.body, res, deps);
}

/**
 * Answers one parsed request body; shared by the Express route and the HTTP/2 listener. Throws SimError on a bad
 * request.
 */
export async function answerChatCompletions(json: unknown, res: SimResponse, deps: RouteDeps): Promise<void> {
  const body = parseRequest(chatRequestSchema, json, 'openai');
  checkOpenAiRules(body);
  const call = await beginCall(body.model, 'openai', res, deps);
  if (!call) return;
  const stop = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  const conversation = fromChatCompletions(body);
  const plan = planReply(conversation, {
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    stop,
  });
  const extra = extraUsageOf(conversation.lastUserText);
  const usage = chatUsage(estimateInputTokens(body.messages, body.tools), plan.pieces.length, extra);
  const head: Head = { id: newId('chatcmpl-'), created: unixSeconds(), model: body.model };
  const callId = newId('call_');

  if (!body.stream) {
    if (await waitForWholeReply(deps.timing, plan.pieces.length, call.signal))
      res.json(completion(head, plan, callId, usage));
    return;
  }

  const includeUsage = body.stream_options?.include_usage === true;
  await streamReply(res, call.signal, deps, async (sse, pacer) => {
    // Every chunk is the same object around its delta, serialised once per stream in JSON.stringify's key
    // order: a slow stream's simulator cost is mostly per token, and thousands of them run at once in bench:streams.
    const chunkHead = {
      ...head,
      object: 'chat.completion.chunk',
      system_fingerprint: FINGERPRINT,
      service_tier: 'default',
    };
    const before = `${JSON.stringify(chunkHead).slice(0, -1)},"choices":[{"index":0,"delta":`;
    const after = `,"logprobs":null,"finish_reason":`;
    const end = includeUsage ? '}],"usage":null}' : '}]}';
    const chunk = (delta: object, finish: string | null) =>
      sse.sendRaw(before + JSON.stringify(delta) + after + JSON.stringify(finish) + end);

    // Nothing but headers goes out before the first token is due.
    if (!(await pacer.beforeToken(0))) return;
    if (!(await chunk({ role: 'assistant', content: plan.kind === 'tool' ? null : '', refusal: null }, null))) return;
    if (plan.kind === 'tool') {
      const start = { index: 0, id: callId, type: 'function', function: { name: plan.name, arguments: '' } };
      if (!(await chunk({ tool_calls: [start] }, null))) return;
    }
    for (const [index, piece] of plan.pieces.entries()) {
      if (!(await pacer.beforeToken(index))) return;
      const delta =
        plan.kind === 'tool' ? { tool_calls: [{ index: 0, function: { arguments: piece } }] } : { content: piece };
      if (!(await chunk(delta, null))) return;
    }
    if (!(await chunk({}, finishReason(plan)))) return;
    if (includeUsage) {
      const usageChunk = {
        ...head,
        object: 'chat.completion.chunk',
        system_fingerprint: FINGERPRINT,
        choices: [],
        usage,
      };
      if (!(await sse.send(undefined, usageChunk))) return;
    }
    await sse.sendRaw('[DONE]');
  });
}

import type { RequestHandler } from 'express';
import { fromMessages } from '../generation/conversation';
import { planReply, type ReplyPlan } from '../generation/reply';
import { estimateInputTokens } from '../generation/tokens';
import { extraUsageOf, type ExtraUsage } from '../generation/usage-directive';
import { newId } from '../wire/ids';
import { waitForWholeReply } from '../wire/pacing';
import { countTokensSchema, messagesRequestSchema, parseRequest } from '../wire/requests';
import { checkAnthropicRules } from '../wire/strict-rules';
import { beginCall, streamReply, type RouteDeps } from './call';

/** Anthropic Messages: `POST /v1/messages` and `POST /v1/messages/count_tokens` (dialects.md §4). */

function stopReason(plan: ReplyPlan): 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' {
  if (plan.kind === 'tool') return 'tool_use';
  if (plan.finish === 'length') return 'max_tokens';
  return plan.finish === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
}

const stopSequence = (plan: ReplyPlan): string | null => (plan.kind === 'text' ? plan.stopSequence : null);

/** `input_tokens` leaves cache reads and writes out; `output_tokens` counts thinking in (dialects.md §4.5). */
function messagesUsage(inputTokens: number, outputTokens: number, extra: ExtraUsage) {
  return {
    input_tokens: inputTokens,
    cache_creation_input_tokens: extra.cacheWrite,
    cache_read_input_tokens: extra.cacheRead,
    output_tokens: outputTokens,
    ...(extra.reasoning > 0 ? { output_tokens_details: { thinking_tokens: extra.reasoning } } : {}),
  };
}

/** Final content blocks; an empty text reply (max_tokens 0, stop sequence at once) has none. */
function contentBlocks(plan: ReplyPlan, toolUseId: string): object[] {
  if (plan.kind === 'tool')
    return [{ type: 'tool_use', id: toolUseId, name: plan.name, input: JSON.parse(plan.arguments) as unknown }];
  const text = plan.pieces.join('');
  return text ? [{ type: 'text', text }] : [];
}

export function messagesRoute(deps: RouteDeps): RequestHandler {
  return async (req, res) => {
    const body = parseRequest(messagesRequestSchema, req.body, 'anthropic');
    checkAnthropicRules(body, 'messages');
    const call = await beginCall(body.model, 'anthropic', res, deps);
    if (!call) return;
    const conversation = fromMessages(body);
    const plan = planReply(conversation, { maxTokens: body.max_tokens, stop: body.stop_sequences ?? [] });
    const extra = extraUsageOf(conversation.lastUserText);
    const inputTokens = estimateInputTokens(body.messages, body.system, body.tools);
    const outputTokens = plan.pieces.length + extra.reasoning;
    const id = newId('msg_');
    const toolUseId = newId('toolu_');
    const message = { id, type: 'message', role: 'assistant', model: body.model };

    if (!body.stream) {
      if (await waitForWholeReply(deps.timing, outputTokens, call.signal)) {
        res.json({
          ...message,
          content: contentBlocks(plan, toolUseId),
          stop_reason: stopReason(plan),
          stop_sequence: stopSequence(plan),
          usage: { ...messagesUsage(inputTokens, outputTokens, extra), service_tier: 'standard' },
        });
      }
      return;
    }

    await streamReply(res, call.signal, deps, async (sse, pacer) => {
      // The Anthropic SDK dispatches on the `event:` line, so every frame carries one equal to its `type`.
      const emit = (type: string, payload: object = {}) => sse.send(type, { type, ...payload });

      if (!(await pacer.beforeToken(0))) return;
      const start = {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // As the API: input and cache counts in full at the start, output only begun (no thinking yet).
        usage: {
          ...messagesUsage(inputTokens, Math.min(1, outputTokens), { ...extra, reasoning: 0 }),
          service_tier: 'standard',
        },
      };
      if (!(await emit('message_start', { message: start }))) return;
      const hasBlock = plan.pieces.length > 0;
      if (hasBlock) {
        const block =
          plan.kind === 'tool'
            ? { type: 'tool_use', id: toolUseId, name: plan.name, input: {} }
            : { type: 'text', text: '' };
        if (!(await emit('content_block_start', { index: 0, content_block: block }))) return;
      }
      if (!(await emit('ping'))) return;
      for (const [index, piece] of plan.pieces.entries()) {
        if (!(await pacer.beforeToken(index))) return;
        const delta =
          plan.kind === 'tool'
            ? { type: 'input_json_delta', partial_json: piece }
            : { type: 'text_delta', text: piece };
        if (!(await emit('content_block_delta', { index: 0, delta }))) return;
      }
      if (hasBlock && !(await emit('content_block_stop', { index: 0 }))) return;
      const delta = { stop_reason: stopReason(plan), stop_sequence: stopSequence(plan) };
      if (!(await emit('message_delta', { delta, usage: messagesUsage(inputTokens, outputTokens, extra) }))) return;
      await emit('message_stop');
    });
  };
}

export function countTokensRoute(): RequestHandler {
  return (req, res) => {
    const body = parseRequest(countTokensSchema, req.body, 'anthropic');
    checkAnthropicRules(body, 'count_tokens');
    res.json({ input_tokens: estimateInputTokens(body.messages, body.system, body.tools) });
  };
}

import { dialectId } from '../ids';
import type { ChatRequest, ChatResponse } from '../ir';
import { responsesStatus, settleStopReason } from '../stop-reasons';
import { encryptedContentOf } from './reasoning-carrier';
import { responsesObject } from './response-object';

/**
 * The neutral reply as a Responses `response` object (dialects.md §3.3). Output items follow the blocks in
 * order: reasoning → `rs_…` item, a run of text and refusal parts → one `msg_…` message item, each tool call →
 * a `fc_…` function_call item whose `call_id` is the call's id (callers pair results by `call_id`).
 */
export function renderResponsesResponse(res: ChatResponse, request?: ChatRequest): Record<string, unknown> {
  const output: Array<Record<string, unknown>> = [];
  let message: Array<Record<string, unknown>> | undefined;
  let toolCalls = 0;
  for (const block of res.content) {
    if (block.type === 'text' || block.type === 'refusal') {
      if (block.text === '') continue;
      if (!message) {
        message = [];
        output.push({
          type: 'message',
          id: dialectId('msg_'),
          status: 'completed',
          role: 'assistant',
          content: message,
        });
      }
      message.push(
        block.type === 'text'
          ? { type: 'output_text', text: block.text, annotations: [], logprobs: [] }
          : { type: 'refusal', refusal: block.text },
      );
      continue;
    }
    message = undefined;
    if (block.type === 'reasoning') {
      const item: Record<string, unknown> = {
        type: 'reasoning',
        id: block.itemId ?? dialectId('rs_'),
        summary: block.text === '' ? [] : [{ type: 'summary_text', text: block.text }],
      };
      const encrypted = encryptedContentOf(block);
      if (encrypted !== undefined) item.encrypted_content = encrypted;
      output.push(item);
    } else {
      const args = block.arguments === '' ? '{}' : block.arguments;
      output.push({
        type: 'function_call',
        id: dialectId('fc_'),
        call_id: block.id,
        name: block.name,
        arguments: args,
        status: 'completed',
      });
      toolCalls++;
    }
  }
  const { status, incomplete_details } = responsesStatus(settleStopReason(res.stopReason, toolCalls > 0));
  // OpenAI marks the item that was cut off as incomplete, not only the response.
  const last = output[output.length - 1];
  if (status === 'incomplete' && last && last.type !== 'reasoning') last.status = 'incomplete';
  return responsesObject({
    id: request?.responses?.id ?? (res.id.startsWith('resp_') ? res.id : `resp_${res.id}`),
    model: res.model,
    createdAt: res.created,
    status,
    output,
    usage: res.usage,
    incompleteDetails: incomplete_details,
    request,
  });
}

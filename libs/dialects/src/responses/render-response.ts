import { dialectId } from '../ids';
import type { ChatRequest, ChatResponse, DeclaredTool } from '../ir';
import { responsesStatus, settleStopReason } from '../stop-reasons';
import { declaredTools } from '../tool-names';
import { mcpOutputItem } from './mcp-items';
import { encryptedContentOf } from './reasoning-carrier';
import { responsesObject } from './response-object';
import { callItem, callItemId } from './tool-call-items';

/**
 * The neutral reply as a Responses `response` object (dialects.md §3.3). Output items follow the blocks in
 * order: reasoning → `rs_…` item, a run of text and refusal parts → one `msg_…` message item, each tool call →
 * a `fc_…` function_call item whose `call_id` is the call's id (callers pair results by `call_id`), or, for a
 * tool declared in a namespace or as a custom tool, the item it was declared as (tool-call-items.ts). What the
 * gateway did with the caller's MCP tools comes first (`mcp_list_tools`, `mcp_call`).
 */
export function renderResponsesResponse(res: ChatResponse, request?: ChatRequest): Record<string, unknown> {
  const output: Array<Record<string, unknown>> = (res.mcp ?? []).map(mcpOutputItem);
  let message: Array<Record<string, unknown>> | undefined;
  let toolCalls = 0;
  let declared: Map<string, DeclaredTool> | null | undefined;
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
      // Only a request that declared namespaced or free-form tools has names to map back.
      if (declared === undefined) declared = declaredTools(request?.tools) ?? null;
      const as = declared?.get(block.name);
      const fields = { id: callItemId(as), callId: block.id, name: block.name, arguments: block.arguments };
      output.push(callItem(fields, as, 'completed'));
      toolCalls++;
    }
  }
  const { status, incomplete_details } = responsesStatus(settleStopReason(res.stopReason, toolCalls > 0));
  // OpenAI marks the item that was cut off as incomplete, not only the response.
  const last = output[output.length - 1];
  if (status === 'incomplete' && last && 'status' in last) last.status = 'incomplete';
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

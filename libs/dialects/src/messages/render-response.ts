import { sanitizeToolId } from '../ids';
import type { ChatResponse } from '../ir';
import { mcpBlocks } from './mcp-blocks';
import { messagesStopReason, settleStopReason } from '../stop-reasons';
import { parseToolArguments } from '../tool-arguments';
import { messagesUsage } from '../usage';

/**
 * The neutral reply as an Anthropic Message (dialects.md §4.3). Reasoning is shown as thinking only when
 * Anthropic signed it: a client replays thinking blocks verbatim, and an unsigned or foreign one would make
 * its next request fail. Refusals are said as text, as Anthropic does. The MCP tools the gateway ran come
 * first, as Anthropic's MCP connector shows them (`mcp_tool_use`, `mcp_tool_result`).
 */
export function renderMessagesResponse(res: ChatResponse): Record<string, unknown> {
  const content: Array<Record<string, unknown>> = (res.mcp ?? []).flatMap(mcpBlocks);
  let toolCalls = 0;
  for (const block of res.content) {
    switch (block.type) {
      case 'text':
      case 'refusal':
        // No `citations` key at all: Anthropic leaves it out when there are none, and strict clients (the
        // Vercel AI SDK) refuse a null there.
        if (block.text !== '') content.push({ type: 'text', text: block.text });
        break;
      case 'reasoning':
        if (block.origin !== 'anthropic') break;
        if (block.redacted !== undefined) content.push({ type: 'redacted_thinking', data: block.redacted });
        else if (block.signature) content.push({ type: 'thinking', thinking: block.text, signature: block.signature });
        break;
      case 'tool_call':
        content.push({
          type: 'tool_use',
          id: sanitizeToolId(block.id),
          name: block.name,
          input: parseToolArguments(block.arguments),
        });
        toolCalls++;
        break;
    }
  }
  return {
    id: res.id.startsWith('msg_') ? res.id : `msg_${res.id}`,
    type: 'message',
    role: 'assistant',
    model: res.model,
    content,
    stop_reason: messagesStopReason(settleStopReason(res.stopReason, toolCalls > 0)),
    stop_sequence: res.stopSequence ?? null,
    usage: messagesUsage(res.usage, 'standard'),
  };
}

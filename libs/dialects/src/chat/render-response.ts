import type { ChatResponse } from '../ir';
import { chatFinishReason, settleStopReason } from '../stop-reasons';
import { chatUsage } from '../usage';

/** The neutral reply as a chat-completions body, in the exact shape of dialects.md §2.3. */
export function renderChatResponse(res: ChatResponse): Record<string, unknown> {
  const texts: string[] = [];
  const refusals: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: Array<Record<string, unknown>> = [];
  for (const block of res.content) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'refusal') refusals.push(block.text);
    else if (block.type === 'reasoning' && block.text !== '') reasoning.push(block.text);
    else if (block.type === 'tool_call') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: block.arguments === '' ? '{}' : block.arguments },
      });
    }
  }
  const text = texts.join('');
  const message: Record<string, unknown> = {
    role: 'assistant',
    // OpenAI sends null, not "", when the turn is only tool calls or a refusal.
    content: text === '' && (toolCalls.length > 0 || refusals.length > 0) ? null : text,
    refusal: refusals.length > 0 ? refusals.join('') : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  message.annotations = [];
  // Non-standard, as DeepSeek and vLLM send it; strict clients ignore unknown fields.
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('\n\n');

  return {
    id: res.id.startsWith('chatcmpl-') ? res.id : `chatcmpl-${res.id}`,
    object: 'chat.completion',
    created: res.created,
    model: res.model,
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: chatFinishReason(settleStopReason(res.stopReason, toolCalls.length > 0)),
      },
    ],
    usage: chatUsage(res.usage),
  };
}

import type { AssistantBlock, ChatRequest, Message } from '@sbc/dialects';
import { redactSecrets } from '@sbc/guardrails';

// Prompt and completion content as the GenAI semantic conventions record it (`gen_ai.input.messages`,
// `gen_ai.output.messages`: JSON lists of `{role, parts}`), recorded only when the operator turns it on
// (OTEL_GENAI_CAPTURE_CONTENT), and then with every secret we can recognise replaced.

/** Characters kept of one part (a long document pasted into a prompt is cut, and says so). */
export const MAX_PART_CHARS = 16_384;

function captured(text: string): string {
  const cut = text.length > MAX_PART_CHARS ? `${text.slice(0, MAX_PART_CHARS)}…[truncated]` : text;
  return redactSecrets(cut);
}

type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_call_response'; id: string; response: string }
  // Images and documents are named, never copied: their bytes are no use in a trace.
  | { type: 'image' | 'document' };

function partsOf(blocks: Message['content']): Part[] {
  const parts: Part[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
      case 'refusal':
        parts.push({ type: 'text', content: captured(block.text) });
        break;
      case 'reasoning':
        if (block.text) parts.push({ type: 'reasoning', content: captured(block.text) });
        break;
      case 'tool_call':
        parts.push({ type: 'tool_call', id: block.id, name: block.name, arguments: captured(block.arguments) });
        break;
      case 'tool_result': {
        const text = block.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('\n');
        parts.push({ type: 'tool_call_response', id: block.callId, response: captured(text) });
        break;
      }
      case 'image':
      case 'document':
        parts.push({ type: block.type });
        break;
    }
  }
  return parts;
}

/** `gen_ai.input.messages`: the prompt's turns in order, system turns included. */
export function inputMessages(request: ChatRequest): string {
  return JSON.stringify(request.messages.map((message) => ({ role: message.role, parts: partsOf(message.content) })));
}

/** `gen_ai.output.messages`: the one reply, with why it stopped. */
export function outputMessages(blocks: AssistantBlock[], finishReason: string | undefined): string {
  return JSON.stringify([{ role: 'assistant', parts: partsOf(blocks), finish_reason: finishReason ?? 'error' }]);
}

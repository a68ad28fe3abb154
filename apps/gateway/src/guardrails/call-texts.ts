import type { AssistantBlock, ChatRequest, ChatResponse, Message, UserBlock } from '@sbc/dialects';

// Every text a call carries, in its neutral form (libs/dialects ir.ts), which every dialect parses into: system and
// developer messages wherever they stand (a Responses call's `instructions` is the first), user text, tool results,
// the assistant turns replayed (text, refusals, reasoning, tool-call arguments), and the reply's own. A guardrail
// reads and rewrites texts through these two walks only, so no field can be skipped in one dialect and not another
// (call-texts.test.ts walks every text field of each dialect's record).

type MapText = (text: string) => string;

function mapAssistant(block: AssistantBlock, map: MapText): AssistantBlock {
  switch (block.type) {
    case 'text':
    case 'refusal':
      return { ...block, text: map(block.text) };
    case 'reasoning':
      return block.text === '' ? block : { ...block, text: map(block.text) };
    case 'tool_call':
      return { ...block, arguments: map(block.arguments) };
  }
}

function mapUser(block: UserBlock, map: MapText): UserBlock {
  switch (block.type) {
    case 'text':
      return { ...block, text: map(block.text) };
    case 'tool_result':
      return {
        ...block,
        content: block.content.map((part) => (part.type === 'text' ? { ...part, text: map(part.text) } : part)),
      };
    default:
      // Images and documents are bytes or links, not text.
      return block;
  }
}

function mapMessage(message: Message, map: MapText): Message {
  switch (message.role) {
    case 'system':
      return { ...message, content: message.content.map((block) => ({ ...block, text: map(block.text) })) };
    case 'user':
      return { ...message, content: message.content.map((block) => mapUser(block, map)) };
    case 'assistant':
      return { ...message, content: message.content.map((block) => mapAssistant(block, map)) };
  }
}

/**
 * The request with every text mapped. A Responses call's `instructions` are also kept as given, for the response
 * object's echo and a stored response: that copy is mapped too, so a redacted text is never echoed or kept.
 */
export function mapRequestTexts(request: ChatRequest, map: MapText): ChatRequest {
  const messages = request.messages.map((message) => mapMessage(message, map));
  const responses = request.responses;
  if (responses?.instructions === undefined) return { ...request, messages };
  return { ...request, messages, responses: { ...responses, instructions: map(responses.instructions) } };
}

/** The reply with every text mapped: its text, refusals, reasoning and tool-call arguments. */
export function mapReplyTexts(reply: ChatResponse, map: MapText): ChatResponse {
  return { ...reply, content: reply.content.map((block) => mapAssistant(block, map)) };
}

/** Every text of a request or a reply, in order. */
export function textsOf(walk: (map: MapText) => unknown): string[] {
  const texts: string[] = [];
  walk((text) => {
    texts.push(text);
    return text;
  });
  return texts;
}

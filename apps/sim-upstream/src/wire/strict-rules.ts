import { SimError } from './errors';

/**
 * The providers' conversation rules that a schema of top-level fields cannot say, checked the way the real
 * APIs check them, so a translation the gateway gets wrong fails in a test instead of in production. Only
 * what a real provider refuses is refused; fields and shapes it accepts pass.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const blocksOf = (content: unknown): Json[] => (Array.isArray(content) ? content.filter(isObject) : []);

/** Anthropic refuses any top-level field it does not know (dialects.md §4.1). */
const MESSAGES_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'output_format',
  'service_tier',
  'container',
  'inference_geo',
  'mcp_servers',
  'cache_control',
  'context_management',
]);
const COUNT_TOKENS_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'output_format',
  'cache_control',
  'mcp_servers',
  'context_management',
]);

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

function anthropicError(param: string, message: string): SimError {
  return new SimError(400, `${param}: ${message}`, param);
}

/**
 * Messages and count_tokens bodies: known top-level fields only; roles `user`/`assistant` only (system text is
 * top-level); no empty text blocks; every `tool_use` answered by a `tool_result` with its id in the very next
 * message, and every `tool_result` answering a `tool_use` of the message just before it.
 */
export function checkAnthropicRules(body: Json, route: 'messages' | 'count_tokens'): void {
  const known = route === 'messages' ? MESSAGES_FIELDS : COUNT_TOKENS_FIELDS;
  for (const field of Object.keys(body))
    if (!known.has(field)) throw anthropicError(field, 'Extra inputs are not permitted');

  const messages = Array.isArray(body.messages) ? body.messages : [];
  let pending: { at: number; ids: Set<string> } | undefined;
  for (const [i, raw] of messages.entries()) {
    const message = isObject(raw) ? raw : {};
    if (message.role !== 'user' && message.role !== 'assistant') {
      throw anthropicError(`messages.${i}.role`, "Input should be 'user' or 'assistant'");
    }
    if (message.content === '')
      throw anthropicError(
        `messages.${i}`,
        'all messages must have non-empty content except for the optional final assistant message',
      );
    const blocks = blocksOf(message.content);
    const answered = new Set<string>();
    for (const [j, block] of blocks.entries()) {
      if (block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '')) {
        throw anthropicError(`messages.${i}.content.${j}.text`, 'text content blocks must be non-empty');
      }
      if (block.type === 'tool_use' && (typeof block.id !== 'string' || !TOOL_ID.test(block.id))) {
        throw anthropicError(
          `messages.${i}.content.${j}.tool_use.id`,
          "String should match pattern '^[a-zA-Z0-9_-]+$'",
        );
      }
      if (block.type !== 'tool_result') continue;
      const id = String(block.tool_use_id);
      if (message.role !== 'user' || !pending || pending.at !== i - 1 || !pending.ids.has(id)) {
        throw anthropicError(
          `messages.${i}.content.${j}`,
          `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a ` +
            `corresponding \`tool_use\` block in the previous message.`,
        );
      }
      answered.add(id);
    }
    if (pending && pending.at === i - 1) {
      const missing = [...pending.ids].filter((id) => !answered.has(id));
      if (missing.length > 0) {
        throw anthropicError(
          `messages.${pending.at}`,
          `\`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each ` +
            `\`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
    const uses = blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id));
    pending = message.role === 'assistant' && uses.length > 0 ? { at: i, ids: new Set(uses) } : undefined;
  }
}

function openAiError(index: number, message: string): SimError {
  return new SimError(400, message, `messages.[${index}].role`, null);
}

/**
 * Chat Completions bodies: a `tool` message answers a `tool_calls` id of the assistant message it follows
 * (only other tool messages in between), and an assistant message with `tool_calls` is followed by one tool
 * message for each of its ids before anything else.
 */
export function checkOpenAiRules(body: Json): void {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let open: { at: number; ids: Set<string> } | undefined;
  const closeOpen = () => {
    if (open && open.ids.size > 0) {
      throw openAiError(
        open.at,
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. ` +
          `The following tool_call_ids did not have response messages: ${[...open.ids].join(', ')}`,
      );
    }
    open = undefined;
  };
  for (const [i, raw] of messages.entries()) {
    const message = isObject(raw) ? raw : {};
    if (message.role === 'tool') {
      const id = String(message.tool_call_id);
      if (!open || !open.ids.delete(id)) {
        throw openAiError(
          i,
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        );
      }
      continue;
    }
    closeOpen();
    const calls =
      message.role === 'assistant' && Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
    if (calls.length > 0) open = { at: i, ids: new Set(calls.map((call) => String(call.id))) };
  }
  closeOpen();
}

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

/**
 * Anthropic refuses any top-level field it does not know (dialects.md §4.1). These are the fields its API takes
 * today, generally available or behind a beta (the SDK's `MessageCreateParams` and `MessageCountTokensParams`):
 * the simulator does not model which beta header unlocks which, only that nothing else gets through.
 */
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
  'speed',
  'diagnostics',
  'compaction',
  'fallbacks',
  'fallback_credit_token',
  'billing_policy',
  'thread',
  'user_profile_id',
  'workspace_id',
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
  'speed',
  'compaction',
  'billing_policy',
  'user_profile_id',
  'workspace_id',
]);

const THINKING_TYPES = new Set(['enabled', 'disabled', 'adaptive']);
const EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);
const MIN_THINKING_BUDGET = 1024;

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

function anthropicError(param: string, message: string): SimError {
  return new SimError(400, `${param}: ${message}`, param);
}

/**
 * Messages and count_tokens bodies: known top-level fields only; roles `user`, `assistant` and, mid-conversation,
 * `system` (checkSystemMessage); no empty text blocks; every `tool_use` answered by a `tool_result` with its id
 * in the very next message, and every `tool_result` answering a `tool_use` of the message just before it;
 * `thinking` and `output_config.effort` as Anthropic takes them.
 */
export function checkAnthropicRules(body: Json, route: 'messages' | 'count_tokens'): void {
  const known = route === 'messages' ? MESSAGES_FIELDS : COUNT_TOKENS_FIELDS;
  for (const field of Object.keys(body))
    if (!known.has(field)) throw anthropicError(field, 'Extra inputs are not permitted');
  checkThinking(body, route);

  const messages = Array.isArray(body.messages) ? body.messages : [];
  let pending: { at: number; ids: Set<string> } | undefined;
  for (const [i, raw] of messages.entries()) {
    const message = isObject(raw) ? raw : {};
    if (message.role === 'system') {
      checkSystemMessage(messages, i);
      continue;
    }
    if (message.role !== 'user' && message.role !== 'assistant') {
      throw anthropicError(`messages.${i}.role`, "Input should be 'user', 'assistant' or 'system'");
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

/**
 * A mid-conversation system message, placed as Anthropic allows it: never first, right after a user message (or
 * an assistant turn that ends in a server tool's use), never next to another system message, and either last
 * or followed by the assistant's turn; its content is text only.
 */
function checkSystemMessage(messages: unknown[], i: number): void {
  const role = (at: number): unknown => (isObject(messages[at]) ? (messages[at] as Json).role : undefined);
  const where = `messages.${i}`;
  if (i === 0)
    throw anthropicError(where, 'a system message cannot be the first message; use the top-level `system` parameter');
  const before = messages[i - 1] as Json;
  const afterServerTool = role(i - 1) === 'assistant' && blocksOf(before.content).at(-1)?.type === 'server_tool_use';
  if (role(i - 1) !== 'user' && !afterServerTool)
    throw anthropicError(where, 'a system message must follow a user message');
  if (i + 1 < messages.length && role(i + 1) !== 'assistant')
    throw anthropicError(where, 'a system message must be the last message or be followed by an assistant message');
  const content = (messages[i] as Json).content;
  if (typeof content === 'string') {
    if (content.trim() === '') throw anthropicError(`${where}.content`, 'system messages must have non-empty content');
    return;
  }
  if (!Array.isArray(content) || content.length === 0)
    throw anthropicError(`${where}.content`, 'Input should be a valid string or a list of text blocks');
  for (const [j, block] of content.entries()) {
    if (!isObject(block) || block.type !== 'text')
      throw anthropicError(`${where}.content.${j}.type`, "Input should be 'text'");
    if (typeof block.text !== 'string' || block.text.trim() === '')
      throw anthropicError(`${where}.content.${j}.text`, 'text content blocks must be non-empty');
  }
}

/** `thinking` by its type, an enabled budget of at least 1024 and below `max_tokens`, and a known effort. */
function checkThinking(body: Json, route: 'messages' | 'count_tokens'): void {
  const thinking = body.thinking;
  if (thinking !== undefined && thinking !== null) {
    const type = isObject(thinking) ? thinking.type : undefined;
    if (typeof type !== 'string' || !THINKING_TYPES.has(type))
      throw anthropicError('thinking.type', "Input should be 'enabled', 'disabled' or 'adaptive'");
    if (type === 'enabled') {
      const budget = (thinking as Json).budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget))
        throw anthropicError('thinking.enabled.budget_tokens', 'Field required');
      if (budget < MIN_THINKING_BUDGET)
        throw anthropicError(
          'thinking.enabled.budget_tokens',
          `Input should be greater than or equal to ${MIN_THINKING_BUDGET}`,
        );
      if (route === 'messages' && typeof body.max_tokens === 'number' && budget >= body.max_tokens)
        throw new SimError(400, '`max_tokens` must be greater than `thinking.budget_tokens`', 'max_tokens');
    }
  }
  const config = body.output_config;
  const effort = isObject(config) ? config.effort : undefined;
  if (effort !== undefined && effort !== null && (typeof effort !== 'string' || !EFFORTS.has(effort)))
    throw anthropicError('output_config.effort', "Input should be 'low', 'medium', 'high', 'xhigh' or 'max'");
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

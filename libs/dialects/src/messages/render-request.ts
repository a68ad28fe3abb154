import { sanitizeToolId } from '../ids';
import type {
  AssistantBlock,
  ChatRequest,
  DocumentBlock,
  ImageBlock,
  Message,
  TextBlock,
  ToolChoice,
  UserBlock,
} from '../ir';
import { parseToolArguments } from '../tool-arguments';
import { thinkingConfig } from './thinking';

/** The neutral request as an Anthropic Messages body (dialects.md §4.1, §6). */

export interface MessagesRenderOptions {
  /** `max_tokens` is required by Anthropic; used when the caller gave no cap (the model's default). */
  defaultMaxTokens: number;
}

type Block = Record<string, unknown>;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

export function renderMessagesRequest(
  req: ChatRequest,
  upstreamModel: string,
  options: MessagesRenderOptions,
): Record<string, unknown> {
  const maxTokens = req.maxOutputTokens ?? options.defaultMaxTokens;
  const { system, turns } = renderTurns(req.messages);
  const body: Record<string, unknown> = { model: upstreamModel, max_tokens: maxTokens, messages: turns };
  if (system.length > 0) body.system = system.length === 1 ? system[0]!.text : system;

  const { thinking, effort } = thinkingConfig(req, maxTokens);
  const thinkingOn = thinking !== undefined && thinking.type !== 'disabled';
  if (thinking) body.thinking = thinking;
  // Thinking refuses sampling changes; newer Claude models refuse temperature and top_p together.
  if (!thinkingOn) {
    if (req.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, req.temperature));
    else if (req.topP !== undefined) body.top_p = req.topP;
    if (req.topK !== undefined) body.top_k = req.topK;
  }
  if (req.stop && req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.stream) body.stream = true;

  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((tool) => {
      const out: Record<string, unknown> = { name: tool.name };
      if (tool.description !== undefined) out.description = tool.description;
      const schema = tool.parameters ?? { properties: {} };
      // Anthropic demands an object schema; OpenAI callers often leave out the redundant `type`.
      out.input_schema = schema.type === undefined ? { type: 'object', ...schema } : schema;
      return out;
    });
    const choice = renderToolChoice(req.toolChoice, req.parallelToolCalls);
    if (choice) body.tool_choice = choice;
  }

  const outputConfig: Record<string, unknown> = {};
  if (effort !== undefined) outputConfig.effort = effort;
  if (req.responseFormat?.type === 'json_schema')
    outputConfig.format = { type: 'json_schema', schema: req.responseFormat.schema };
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig;
  if (req.user !== undefined) body.metadata = { user_id: req.user };
  return body;
}

function renderToolChoice(
  choice: ToolChoice | undefined,
  parallel: boolean | undefined,
): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (choice?.type === 'required') out = { type: 'any' };
  else if (choice?.type === 'tool') out = { type: 'tool', name: choice.name };
  else if (choice) out = { type: choice.type };
  if (parallel === false && out?.type !== 'none')
    out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/**
 * Leading system turns become `system`; later ones become user text (Anthropic has no system role mid
 * conversation, and hoisting them would move an instruction to before the history it refers to). Empty turns
 * are dropped and same-role neighbours merged, and tool results lead their user message, as Anthropic requires.
 */
function renderTurns(messages: Message[]): { system: TextBlock[]; turns: Turn[] } {
  const system: TextBlock[] = [];
  const turns: Turn[] = [];
  let leading = true;
  for (const message of messages) {
    if (message.role === 'system' && leading) {
      for (const block of message.content) if (hasText(block.text)) system.push({ type: 'text', text: block.text });
      continue;
    }
    leading = false;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const content =
      message.role === 'assistant' ? renderAssistantBlocks(message.content) : renderUserBlocks(message.content);
    if (content.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  }
  for (const turn of turns) {
    if (turn.role === 'user' && turn.content.some((block) => block.type === 'tool_result')) {
      turn.content = [
        ...turn.content.filter((block) => block.type === 'tool_result'),
        ...turn.content.filter((block) => block.type !== 'tool_result'),
      ];
    }
  }
  return { system, turns };
}

/** Anthropic rejects empty and whitespace-only text blocks. */
const hasText = (text: string): boolean => text.trim() !== '';

function renderUserBlocks(blocks: UserBlock[]): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      const result: Block = { type: 'tool_result', tool_use_id: sanitizeToolId(block.callId) };
      const content = block.content.flatMap(renderMedia);
      if (content.length > 0) result.content = content;
      if (block.isError) result.is_error = true;
      out.push(result);
    } else {
      out.push(...renderMedia(block));
    }
  }
  return out;
}

function renderMedia(block: TextBlock | ImageBlock | DocumentBlock): Block[] {
  if (block.type === 'text') return hasText(block.text) ? [{ type: 'text', text: block.text }] : [];
  const source = block.source;
  if (block.type === 'image') {
    const imageSource =
      source.kind === 'url'
        ? { type: 'url', url: source.url }
        : { type: 'base64', media_type: source.mediaType, data: source.data };
    return [{ type: 'image', source: imageSource }];
  }
  let docSource: Record<string, unknown>;
  if (source.kind === 'url') docSource = { type: 'url', url: source.url };
  // Anthropic takes base64 for PDFs only; plain text goes as a text source.
  else if (source.mediaType.startsWith('text/')) {
    docSource = { type: 'text', media_type: 'text/plain', data: Buffer.from(source.data, 'base64').toString('utf8') };
  } else docSource = { type: 'base64', media_type: source.mediaType, data: source.data };
  const document: Block = { type: 'document', source: docSource };
  if (block.filename !== undefined) document.title = block.filename;
  return [document];
}

/**
 * Reasoning goes back only as Anthropic issued it: signed thinking unchanged, redacted thinking as
 * `redacted_thinking`. Anything else (OpenAI reasoning, unsigned text) would fail the signature check.
 */
function renderAssistantBlocks(blocks: AssistantBlock[]): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
      case 'refusal':
        if (hasText(block.text)) out.push({ type: 'text', text: block.text });
        break;
      case 'tool_call':
        out.push({
          type: 'tool_use',
          id: sanitizeToolId(block.id),
          name: block.name,
          input: parseToolArguments(block.arguments),
        });
        break;
      case 'reasoning':
        if (block.origin !== 'anthropic') break;
        if (block.redacted !== undefined) out.push({ type: 'redacted_thinking', data: block.redacted });
        else if (block.signature) out.push({ type: 'thinking', thinking: block.text, signature: block.signature });
        break;
    }
  }
  return out;
}

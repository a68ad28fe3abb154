import { urlOfSource } from '../data-url';
import type {
  AssistantBlock,
  ChatRequest,
  DocumentBlock,
  ImageBlock,
  Message,
  ResponseFormat,
  TextBlock,
  ToolChoice,
  UserBlock,
} from '../ir';
import { openAiToolName } from '../tool-names';

/**
 * The neutral request as a chat-completions body for an OpenAI-compatible upstream.
 *
 * The output cap goes out as `max_tokens`, not `max_completion_tokens`: vLLM, llama.cpp, Ollama, TGI and most
 * hosted OpenAI-compatible servers only know the older name, while OpenAI itself still accepts it for every
 * non-reasoning model. An upstream that needs the new name (OpenAI o-series) is better served natively.
 */
export function renderChatRequest(req: ChatRequest, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: upstreamModel, messages: renderChatMessages(req.messages) };
  if (req.maxOutputTokens !== undefined) body.max_tokens = req.maxOutputTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop && req.stop.length > 0) body.stop = req.stop;
  if (req.stream) {
    body.stream = true;
    // Always: the gateway meters every call, whether or not the caller asked to see usage.
    body.stream_options = { include_usage: true };
  }
  // OpenAI refuses `tool_choice` and `parallel_tool_calls` without tools.
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((tool) => {
      const fn: Record<string, unknown> = { name: openAiToolName(tool.name) };
      if (tool.description !== undefined) fn.description = tool.description;
      fn.parameters = tool.parameters ?? { type: 'object', properties: {} };
      if (tool.strict !== undefined) fn.strict = tool.strict;
      return { type: 'function', function: fn };
    });
    if (req.toolChoice) body.tool_choice = renderToolChoice(req.toolChoice);
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  }
  const format = renderResponseFormat(req.responseFormat);
  if (format) body.response_format = format;
  // Only an effort the caller named: a thinking budget alone would send `reasoning_effort` to models that
  // reject it, and an Anthropic budget has no faithful effort.
  if (req.reasoning?.effort !== undefined) body.reasoning_effort = req.reasoning.effort;
  if (req.user !== undefined) body.user = req.user;
  return body;
}

function renderToolChoice(choice: ToolChoice): unknown {
  if (choice.type === 'tool') return { type: 'function', function: { name: openAiToolName(choice.name) } };
  return choice.type;
}

function renderResponseFormat(format: ResponseFormat | undefined): Record<string, unknown> | undefined {
  // `text` is the default; leaving it out spares servers that do not know `response_format` at all.
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const spec: Record<string, unknown> = { name: format.name, schema: format.schema };
  if (format.description !== undefined) spec.description = format.description;
  if (format.strict !== undefined) spec.strict = format.strict;
  return { type: 'json_schema', json_schema: spec };
}

function renderChatMessages(turns: Message[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const turn of turns) {
    if (turn.role === 'system') {
      const text = joinText(turn.content);
      if (text !== '') out.push({ role: 'system', content: text });
    } else if (turn.role === 'user') {
      renderUserTurn(turn.content, out);
    } else {
      const message = renderAssistantTurn(turn.content);
      if (message) out.push(message);
    }
  }
  return out;
}

const joinText = (blocks: Array<{ text: string }>): string =>
  blocks
    .map((block) => block.text)
    .filter((text) => text !== '')
    .join('\n\n');

/**
 * Tool results become one `tool` message each, first (they must follow the assistant's calls directly). A
 * `tool` message carries text only, so images and documents from results move to the user message after them,
 * followed by the turn's own text and media.
 */
function renderUserTurn(blocks: UserBlock[], out: Array<Record<string, unknown>>): void {
  const rest: Array<TextBlock | ImageBlock | DocumentBlock> = [];
  for (const block of blocks) {
    if (block.type !== 'tool_result') continue;
    const texts = block.content.filter((part): part is TextBlock => part.type === 'text');
    const media = block.content.filter((part) => part.type !== 'text');
    let content = joinText(texts);
    if (content === '' && media.length > 0) content = 'The result is in the next message.';
    out.push({ role: 'tool', tool_call_id: block.callId, content });
    rest.push(...media);
  }
  for (const block of blocks) if (block.type !== 'tool_result') rest.push(block);
  const content = rest.filter((block) => block.type !== 'text' || block.text !== '');
  if (content.length === 0) {
    // A user turn whose only text is empty is still a turn; chat allows an empty string.
    if (!blocks.some((block) => block.type === 'tool_result')) out.push({ role: 'user', content: '' });
    return;
  }
  if (content.length === 1 && content[0]!.type === 'text') {
    out.push({ role: 'user', content: content[0]!.text });
    return;
  }
  out.push({ role: 'user', content: content.map(renderUserPart) });
}

function renderUserPart(block: TextBlock | ImageBlock | DocumentBlock): Record<string, unknown> {
  if (block.type === 'text') return { type: 'text', text: block.text };
  if (block.type === 'image') {
    const image: Record<string, unknown> = { url: urlOfSource(block.source) };
    // `original` is a Responses-only level; chat knows auto/low/high.
    if (block.detail !== undefined && block.detail !== 'original') image.detail = block.detail;
    return { type: 'image_url', image_url: image };
  }
  // Chat files take inline data only; a document URL is passed as text so the model at least sees it.
  if (block.source.kind === 'url') return { type: 'text', text: block.source.url };
  const file: Record<string, unknown> = { file_data: urlOfSource(block.source) };
  if (block.filename !== undefined) file.filename = block.filename;
  return { type: 'file', file };
}

/** Reasoning is left out (chat has no replay field for it); a refusal is said as text. */
function renderAssistantTurn(blocks: AssistantBlock[]): Record<string, unknown> | undefined {
  const texts: string[] = [];
  const calls: Array<Record<string, unknown>> = [];
  for (const block of blocks) {
    if (block.type === 'text' || block.type === 'refusal') {
      if (block.text !== '') texts.push(block.text);
    } else if (block.type === 'tool_call') {
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: openAiToolName(block.name), arguments: block.arguments === '' ? '{}' : block.arguments },
      });
    }
  }
  if (texts.length === 0 && calls.length === 0) return undefined;
  const message: Record<string, unknown> = { role: 'assistant', content: texts.length > 0 ? texts.join('\n\n') : null };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

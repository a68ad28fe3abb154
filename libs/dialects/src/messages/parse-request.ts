import { dropField, dropTopLevelFields } from '../dropped-fields';
import type {
  ChatRequest,
  Message,
  ReasoningRequest,
  ResponseFormat,
  TextBlock,
  ToolChoice,
  ToolDefinition,
} from '../ir';
import type { JsonObject } from '../json';
import {
  addIssue,
  at,
  createParseContext,
  eachObject,
  finishRequest,
  readArray,
  readBoolean,
  readEnum,
  readNumber,
  readObject,
  readStops,
  readString,
  requireBodyObject,
  typeName,
  type ParseContext,
} from '../parse-context';
import { readMcpToolset, readMessagesMcpServers, type McpToolset } from '../mcp-tools';
import { readFunctionTool } from '../parse-tools';
import type { DialectErrorWording } from '../request-error';
import { ANTHROPIC_EFFORTS } from '../reasoning-effort';
import { parseAssistantBlocks, parseUserBlocks } from './parse-content';

/** Anthropic words a refusal `<param>: <problem>`, and clients such as Claude Code read it that way. */
const ANTHROPIC_WORDING: DialectErrorWording = { pathInMessage: true };

/** An Anthropic Messages request body (dialects.md §4.1) into the neutral form; throws `DialectRequestError`. */
export function parseMessagesRequest(body: unknown): ChatRequest {
  const obj = requireBodyObject(body);
  const ctx = createParseContext();

  const model = readString(ctx, obj, 'model', '', { required: true, nonEmpty: true });
  const maxTokens = readNumber(ctx, obj, 'max_tokens', '', { required: true, integer: true, min: 0 });
  const messages: Message[] = [];
  const system = parseSystemBlocks(ctx, obj.system, 'system');
  if (system.length > 0) messages.push({ role: 'system', content: system });
  const items = readArray(ctx, obj, 'messages', '', { required: true });
  if (items) {
    eachObject(ctx, items, 'messages', (item, path) => {
      if (item.role === 'user') messages.push({ role: 'user', content: parseUserBlocks(ctx, item, path) });
      else if (item.role === 'assistant')
        messages.push({ role: 'assistant', content: parseAssistantBlocks(ctx, item, path) });
      else if (item.role === 'system') {
        // A mid-conversation system message (Claude Code sends one after the first user turn) stays in place.
        if (item.content === undefined || item.content === null)
          addIssue(ctx, at(path, 'content'), 'required', 'Field required');
        const content = parseSystemBlocks(ctx, item.content, at(path, 'content'));
        if (content.length > 0) messages.push({ role: 'system', content });
      } else if (item.role === undefined || item.role === null)
        addIssue(ctx, at(path, 'role'), 'required', 'Field required');
      else
        addIssue(
          ctx,
          at(path, 'role'),
          'invalid_value',
          `Unexpected role ${JSON.stringify(item.role)}. Allowed roles are "user", "assistant" or "system".`,
        );
    });
  }

  const choice = parseMessagesToolChoice(ctx, obj);
  const outputConfig = readObject(ctx, obj, 'output_config', '');
  const metadata = readObject(ctx, obj, 'metadata', '');
  const toolsets: McpToolset[] = [];
  const request: Omit<ChatRequest, 'dropped'> = {
    model: model ?? '',
    messages,
    stream: readBoolean(ctx, obj, 'stream', '') ?? false,
    maxOutputTokens: maxTokens,
    temperature: readNumber(ctx, obj, 'temperature', '', { min: 0, max: 1 }),
    topP: readNumber(ctx, obj, 'top_p', '', { min: 0, max: 1 }),
    topK: readNumber(ctx, obj, 'top_k', '', { integer: true, min: 0 }),
    stop: readStops(ctx, obj, 'stop_sequences', '', false),
    tools: parseMessagesTools(ctx, obj, toolsets),
    toolChoice: choice.choice,
    parallelToolCalls: choice.disableParallel ? false : undefined,
    responseFormat: parseOutputFormat(ctx, obj, outputConfig),
    reasoning: parseThinking(ctx, obj, outputConfig),
    user: metadata ? readString(ctx, metadata, 'user_id', 'metadata') : undefined,
  };
  const mcp = readMessagesMcpServers(ctx, obj, toolsets);
  if (mcp && mcp.length > 0) request.mcp = mcp;

  dropTopLevelFields(ctx, 'messages', obj);
  return finishRequest(ctx, request, ANTHROPIC_WORDING);
}

/** The top-level `system`, or a system message's `content`: a string or text blocks (cache_control allowed). */
function parseSystemBlocks(ctx: ParseContext, system: unknown, where: string): TextBlock[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  if (!Array.isArray(system)) {
    addIssue(ctx, where, 'invalid_type', `expected a string or an array of text blocks, received ${typeName(system)}`);
    return [];
  }
  const blocks: TextBlock[] = [];
  eachObject(ctx, system, where, (block, path) => {
    if (block.cache_control != null) dropField(ctx, 'messages', 'cache_control');
    if (block.type !== 'text') {
      addIssue(ctx, at(path, 'type'), 'invalid_value', 'must be text');
      return;
    }
    const text = readString(ctx, block, 'text', path, { required: true });
    if (text) blocks.push({ type: 'text', text });
  });
  return blocks;
}

/** The function tools; an `mcp_toolset` tool narrows a server of `mcp_servers` (mcp-tools.ts): into `toolsets`. */
function parseMessagesTools(ctx: ParseContext, obj: JsonObject, toolsets: McpToolset[]): ToolDefinition[] | undefined {
  const items = readArray(ctx, obj, 'tools', '');
  if (!items) return undefined;
  const tools: ToolDefinition[] = [];
  eachObject(ctx, items, 'tools', (item, path) => {
    if (item.cache_control != null) dropField(ctx, 'messages', 'cache_control');
    if (item.type === 'mcp_toolset') {
      const toolset = readMcpToolset(ctx, item, path);
      if (toolset) toolsets.push(toolset);
      return;
    }
    // Custom tools have no type or `custom`; every versioned type (web_search_20250305, bash_…) is a server
    // or Anthropic-defined client tool that only Anthropic's own API can run or describe.
    if (item.type !== undefined && item.type !== null && item.type !== 'custom') {
      dropField(ctx, 'messages', 'tools.*[server]');
      return;
    }
    if (item.defer_loading === true) dropField(ctx, 'messages', 'tools.*.defer_loading');
    if (item.input_schema === undefined) addIssue(ctx, at(path, 'input_schema'), 'required', 'is required');
    const tool = readFunctionTool(ctx, item, path, 'input_schema');
    if (tool) tools.push(tool);
  });
  return tools;
}

function parseMessagesToolChoice(
  ctx: ParseContext,
  obj: JsonObject,
): { choice?: ToolChoice; disableParallel?: boolean } {
  const choice = readObject(ctx, obj, 'tool_choice', '');
  if (!choice) return {};
  const disableParallel = readBoolean(ctx, choice, 'disable_parallel_tool_use', 'tool_choice');
  switch (choice.type) {
    case 'auto':
    case 'none':
      return { choice: { type: choice.type }, disableParallel };
    case 'any':
      return { choice: { type: 'required' }, disableParallel };
    case 'tool': {
      const name = readString(ctx, choice, 'name', 'tool_choice', { required: true, nonEmpty: true });
      return name === undefined ? {} : { choice: { type: 'tool', name }, disableParallel };
    }
    default:
      addIssue(ctx, 'tool_choice.type', 'invalid_value', 'must be auto, any, tool or none');
      return {};
  }
}

/**
 * `output_config.format`, or the beta's top-level `output_format`; Anthropic's schema has no name, so one is invented.
 */
function parseOutputFormat(
  ctx: ParseContext,
  obj: JsonObject,
  outputConfig: JsonObject | undefined,
): ResponseFormat | undefined {
  const fromConfig = outputConfig && readObject(ctx, outputConfig, 'format', 'output_config');
  const path = fromConfig ? 'output_config.format' : 'output_format';
  const format = fromConfig ?? readObject(ctx, obj, 'output_format', '');
  if (!format) return undefined;
  if (format.type !== 'json_schema') {
    addIssue(ctx, at(path, 'type'), 'invalid_value', 'must be json_schema');
    return undefined;
  }
  const schema = readObject(ctx, format, 'schema', path, true);
  return schema && { type: 'json_schema', name: 'response', schema };
}

function parseThinking(
  ctx: ParseContext,
  obj: JsonObject,
  outputConfig: JsonObject | undefined,
): ReasoningRequest | undefined {
  const reasoning: ReasoningRequest = {};
  const effort = outputConfig && readEnum(ctx, outputConfig, 'effort', 'output_config', ANTHROPIC_EFFORTS);
  if (effort !== undefined) reasoning.effort = effort;
  const thinking = readObject(ctx, obj, 'thinking', '');
  if (thinking) {
    if (thinking.display != null) dropField(ctx, 'messages', 'thinking.display');
    const mode = readEnum(ctx, thinking, 'type', 'thinking', ['enabled', 'disabled', 'adaptive'] as const, true);
    if (mode !== undefined) reasoning.mode = mode;
    if (mode === 'enabled') {
      const budget = readNumber(ctx, thinking, 'budget_tokens', 'thinking', {
        required: true,
        integer: true,
        min: 1024,
      });
      if (budget !== undefined) reasoning.budgetTokens = budget;
    }
  }
  return reasoning.effort === undefined && reasoning.mode === undefined ? undefined : reasoning;
}

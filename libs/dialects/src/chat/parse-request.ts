import { dropField, dropTopLevelFields } from '../dropped-fields';
import type { ChatRequest, ResponseFormat, ToolChoice, ToolDefinition } from '../ir';
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
  readStringMap,
  requireBodyObject,
  type ParseContext,
} from '../parse-context';
import { REASONING_EFFORTS } from '../reasoning-effort';
import { readFunctionTool, readJsonSchemaFormat } from '../parse-tools';
import { parseChatMessages } from './parse-messages';

/** A chat-completions request body (dialects.md §2.1) into the neutral form; throws `DialectRequestError`. */
export function parseChatRequest(body: unknown): ChatRequest {
  const obj = requireBodyObject(body);
  const ctx = createParseContext();

  const model = readString(ctx, obj, 'model', '', { required: true, nonEmpty: true });
  const rawMessages = readArray(ctx, obj, 'messages', '', { required: true, nonEmpty: true });
  const messages = rawMessages ? parseChatMessages(ctx, rawMessages) : [];

  // One choice per request: the Anthropic upstreams cannot sample several, and silently returning one would lie.
  const n = readNumber(ctx, obj, 'n', '', { integer: true, min: 1 });
  if (n !== undefined && n > 1) addIssue(ctx, 'n', 'unsupported', 'only n = 1 is supported');
  if (obj.functions != null)
    addIssue(ctx, 'functions', 'unsupported', 'deprecated `functions` are not supported; use `tools`');
  if (obj.function_call != null)
    addIssue(ctx, 'function_call', 'unsupported', 'deprecated `function_call` is not supported; use `tool_choice`');

  // `max_completion_tokens` is the current name; `max_tokens` the deprecated one older clients still send.
  const maxCompletion = readNumber(ctx, obj, 'max_completion_tokens', '', { integer: true, min: 0 });
  const maxTokens = readNumber(ctx, obj, 'max_tokens', '', { integer: true, min: 0 });

  const streamOptions = readObject(ctx, obj, 'stream_options', '');
  if (streamOptions?.include_obfuscation != null) dropField(ctx, 'chat', 'stream_options.include_obfuscation');

  const request: Omit<ChatRequest, 'dropped'> = {
    model: model ?? '',
    messages,
    stream: readBoolean(ctx, obj, 'stream', '') ?? false,
    maxOutputTokens: maxCompletion ?? maxTokens,
    temperature: readNumber(ctx, obj, 'temperature', '', { min: 0, max: 2 }),
    topP: readNumber(ctx, obj, 'top_p', '', { min: 0, max: 1 }),
    stop: readStops(ctx, obj, 'stop', '', true),
    tools: parseChatTools(ctx, obj),
    toolChoice: parseChatToolChoice(ctx, obj),
    parallelToolCalls: readBoolean(ctx, obj, 'parallel_tool_calls', ''),
    responseFormat: parseChatResponseFormat(ctx, obj),
    user: readString(ctx, obj, 'safety_identifier', '') ?? readString(ctx, obj, 'user', ''),
    metadata: readStringMap(ctx, obj, 'metadata', ''),
    includeStreamUsage: streamOptions ? readBoolean(ctx, streamOptions, 'include_usage', 'stream_options') : undefined,
  };
  const effort = readEnum(ctx, obj, 'reasoning_effort', '', REASONING_EFFORTS);
  if (effort !== undefined) request.reasoning = { effort };

  dropTopLevelFields(ctx, 'chat', obj);
  return finishRequest(ctx, request);
}

function parseChatTools(ctx: ParseContext, obj: JsonObject): ToolDefinition[] | undefined {
  const items = readArray(ctx, obj, 'tools', '');
  if (!items) return undefined;
  const tools: ToolDefinition[] = [];
  eachObject(ctx, items, 'tools', (item, path) => {
    if (item.type === 'custom') {
      dropField(ctx, 'chat', 'tools.*[type=custom]');
      return;
    }
    if (item.type !== 'function') {
      addIssue(ctx, at(path, 'type'), 'invalid_value', 'must be function or custom');
      return;
    }
    const fn = readObject(ctx, item, 'function', path, true);
    if (!fn) return;
    const tool = readFunctionTool(ctx, fn, at(path, 'function'), 'parameters');
    if (tool) tools.push(tool);
  });
  return tools;
}

const CHOICE_WORDS = ['none', 'auto', 'required'] as const;

function parseChatToolChoice(ctx: ParseContext, obj: JsonObject): ToolChoice | undefined {
  const choice = obj.tool_choice;
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === 'string') {
    const word = readEnum(ctx, obj, 'tool_choice', '', CHOICE_WORDS);
    return word === undefined ? undefined : { type: word };
  }
  const object = readObject(ctx, obj, 'tool_choice', '');
  if (!object) return undefined;
  switch (object.type) {
    case 'function': {
      const fn = readObject(ctx, object, 'function', 'tool_choice', true);
      const name = fn && readString(ctx, fn, 'name', 'tool_choice.function', { required: true, nonEmpty: true });
      return name === undefined ? undefined : { type: 'tool', name };
    }
    case 'custom':
      dropField(ctx, 'chat', 'tool_choice[type=custom]');
      return undefined;
    case 'allowed_tools': {
      const allowed = readObject(ctx, object, 'allowed_tools', 'tool_choice', true);
      const mode =
        allowed && readEnum(ctx, allowed, 'mode', 'tool_choice.allowed_tools', ['auto', 'required'] as const, true);
      if (mode === undefined) return undefined;
      dropField(ctx, 'chat', 'tool_choice.allowed_tools.tools');
      return { type: mode };
    }
    default:
      addIssue(ctx, 'tool_choice.type', 'invalid_value', 'must be function, custom or allowed_tools');
      return undefined;
  }
}

function parseChatResponseFormat(ctx: ParseContext, obj: JsonObject): ResponseFormat | undefined {
  const format = readObject(ctx, obj, 'response_format', '');
  if (!format) return undefined;
  switch (format.type) {
    case 'text':
    case 'json_object':
      return { type: format.type };
    case 'json_schema': {
      const spec = readObject(ctx, format, 'json_schema', 'response_format', true);
      return spec && readJsonSchemaFormat(ctx, spec, 'response_format.json_schema');
    }
    default:
      addIssue(ctx, 'response_format.type', 'invalid_value', 'must be text, json_object or json_schema');
      return undefined;
  }
}

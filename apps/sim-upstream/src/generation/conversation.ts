/**
 * Reduces a request in any of the three dialects to the few facts the simulator answers from: what the user
 * last said, whether the turn is a tool result, and which tools may be called. Pure; bodies are already
 * validated at the top level by the routes, so nested parts are read leniently.
 */

export interface ToolSpec {
  name: string;
  /** JSON schema of the arguments (`parameters` / `input_schema`), if given. */
  schema: unknown;
  /** Responses only: the namespace tool that holds it (its calls carry the namespace, as OpenAI's do). */
  namespace?: string;
  /** Responses only: a `custom` tool takes free-form text, and its call is a `custom_tool_call` with `input`. */
  freeForm?: boolean;
}

interface ToolChoice {
  mode: 'auto' | 'none' | 'required';
  /** A specific tool the caller forced. */
  name?: string;
}

export interface Conversation {
  /** Text of the last user turn ('' when there is none). */
  lastUserText: string;
  /** Text of the tool result(s) when the last turn is a tool result. */
  toolResult: string | undefined;
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  /** Structured output the request asks for: a JSON schema, or any JSON object (`json_object` mode). */
  output?: { schema: unknown } | { anyObject: true };
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Text of a string, or of the text-bearing parts of a content array (nested tool results included). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    else if (isObject(part)) {
      if (typeof part.text === 'string') texts.push(part.text);
      else if (part.type === 'tool_result') texts.push(textOf(part.content));
    }
  }
  return texts.join(' ');
}

/**
 * The structured-output request in any dialect's spelling: `{type:"json_schema", schema}` or `{type:"json_object"}`.
 */
function outputOf(format: unknown, schemaOf: (format: Json) => unknown): Conversation['output'] {
  if (!isObject(format)) return undefined;
  if (format.type === 'json_object') return { anyObject: true };
  return format.type === 'json_schema' ? { schema: schemaOf(format) } : undefined;
}

function findLast<T>(items: T[], match: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i -= 1) {
    const item = items[i] as T;
    if (match(item)) return item;
  }
  return undefined;
}

function lastUserText(items: unknown[]): string {
  const user = findLast(items, (item) => isObject(item) && item.role === 'user');
  return isObject(user) ? textOf(user.content) : '';
}

/**
 * The last turn that is not an instruction: agents append system (or developer) messages after the turn the
 * model answers (Claude Code after its first user message), which do not change what that turn was.
 */
function lastTurn(items: unknown[]): unknown {
  return findLast(items, (item) => !isObject(item) || (item.role !== 'system' && item.role !== 'developer'));
}

/**
 * Tool choice from the chat / Responses spelling (`"required"`, `{type:"function", function:{name}}` or
 * `{type:"function", name}`).
 */
function openAiToolChoice(choice: unknown): ToolChoice {
  if (choice === 'none' || choice === 'required' || choice === 'auto') return { mode: choice };
  if (isObject(choice) && (choice.type === 'function' || choice.type === 'custom')) {
    const name = isObject(choice.function) ? choice.function.name : choice.name;
    if (typeof name === 'string') return { mode: 'required', name };
  }
  return { mode: 'auto' };
}

export function fromChatCompletions(body: {
  messages: unknown[];
  tools?: unknown;
  tool_choice?: unknown;
  response_format?: unknown;
}): Conversation {
  const last = lastTurn(body.messages);
  const tools: ToolSpec[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (
      isObject(tool) &&
      tool.type === 'function' &&
      isObject(tool.function) &&
      typeof tool.function.name === 'string'
    ) {
      tools.push({ name: tool.function.name, schema: tool.function.parameters });
    }
  }
  return {
    lastUserText: lastUserText(body.messages),
    toolResult: isObject(last) && last.role === 'tool' ? textOf(last.content) : undefined,
    tools,
    toolChoice: openAiToolChoice(body.tool_choice),
    output: outputOf(body.response_format, (format) =>
      isObject(format.json_schema) ? format.json_schema.schema : undefined,
    ),
  };
}

export function fromResponses(body: {
  input: string | unknown[];
  tools?: unknown;
  tool_choice?: unknown;
  text?: unknown;
}): Conversation {
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const last = lastTurn(items);
  const tools = responsesTools(body.tools);
  let toolResult: string | undefined;
  if (isObject(last) && (last.type === 'function_call_output' || last.type === 'custom_tool_call_output')) {
    toolResult = typeof last.output === 'string' ? last.output : textOf(last.output);
  }
  const output = outputOf(isObject(body.text) ? body.text.format : undefined, (format) => format.schema);
  return {
    lastUserText: lastUserText(items),
    toolResult,
    tools,
    toolChoice: openAiToolChoice(body.tool_choice),
    output,
  };
}

/** Function and custom tools, at the top level or inside `namespace` tools; hosted tools are never called. */
function responsesTools(list: unknown, namespace?: string): ToolSpec[] {
  const tools: ToolSpec[] = [];
  for (const tool of Array.isArray(list) ? list : []) {
    if (!isObject(tool) || typeof tool.name !== 'string') continue;
    const where = namespace === undefined ? {} : { namespace };
    if (tool.type === 'function') tools.push({ name: tool.name, schema: tool.parameters, ...where });
    else if (tool.type === 'custom') tools.push({ name: tool.name, schema: undefined, freeForm: true, ...where });
    else if (tool.type === 'namespace' && namespace === undefined) tools.push(...responsesTools(tool.tools, tool.name));
  }
  return tools;
}

export function fromMessages(body: {
  messages: unknown[];
  tools?: unknown;
  tool_choice?: unknown;
  output_config?: unknown;
  output_format?: unknown;
}): Conversation {
  const last = lastTurn(body.messages);
  let toolResult: string | undefined;
  if (isObject(last) && last.role === 'user' && Array.isArray(last.content)) {
    const results = last.content.filter((block) => isObject(block) && block.type === 'tool_result');
    if (results.length > 0) toolResult = results.map((block) => textOf((block as Json).content)).join(' ');
  }
  const tools: ToolSpec[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    // Custom (client) tools carry an input_schema; versioned server tools (web_search_…) are never called.
    if (isObject(tool) && typeof tool.name === 'string' && isObject(tool.input_schema))
      tools.push({ name: tool.name, schema: tool.input_schema });
  }
  const choice = body.tool_choice;
  let toolChoice: ToolChoice = { mode: 'auto' };
  if (isObject(choice)) {
    if (choice.type === 'none') toolChoice = { mode: 'none' };
    else if (choice.type === 'any') toolChoice = { mode: 'required' };
    else if (choice.type === 'tool' && typeof choice.name === 'string')
      toolChoice = { mode: 'required', name: choice.name };
  }
  // `output_config.format`, or the earlier beta's top-level `output_format`.
  const format = isObject(body.output_config) ? body.output_config.format : body.output_format;
  return {
    lastUserText: lastUserText(body.messages),
    toolResult,
    tools,
    toolChoice,
    output: outputOf(format, (spec) => spec.schema),
  };
}

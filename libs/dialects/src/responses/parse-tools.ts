import { dropField } from '../dropped-fields';
import type { DeclaredTool, McpToolSet, ToolChoice, ToolDefinition } from '../ir';
import type { JsonObject } from '../json';
import {
  addIssue,
  at,
  eachObject,
  readArray,
  readEnum,
  readObject,
  readString,
  type ParseContext,
} from '../parse-context';
import { readResponsesMcpTool } from '../mcp-tools';
import { readFunctionTool } from '../parse-tools';
import { createToolNaming, FREE_FORM_ARGUMENT, type ToolNaming } from '../tool-names';

/**
 * Responses `tools` and `tool_choice` (dialects.md §3.1, §9) into neutral tools. Every target here takes plain
 * functions only, so a `namespace` tool's functions are offered under flattened names (tool-names.ts) and a
 * `custom` (free-form) tool as a function with one string argument; both carry `declared` so that the calls
 * that come back are rendered as the caller declared them. An `mcp` tool is run by the gateway itself
 * (mcp-tools.ts). Other hosted tools (`web_search`, `file_search`, …) run on OpenAI's side, which no target
 * behind the gateway is: they are dropped and named, and a `tool_choice` that forces one is refused, since the
 * call could not do what it demands.
 */

export interface ResponsesTools {
  tools?: ToolDefinition[];
  /** The `mcp` tools, for the gateway to run. */
  mcp?: McpToolSet[];
  /** Flat names for namespaced calls in the input (made on first use; most requests never need it). */
  naming(): ToolNaming;
}

export function parseResponsesTools(ctx: ParseContext, obj: JsonObject): ResponsesTools {
  const items = readArray(ctx, obj, 'tools', '');
  let tools: ToolDefinition[] | undefined;
  let mcp: McpToolSet[] | undefined;
  let namespaces: Array<{ at: number; item: JsonObject; path: string }> | undefined;
  let naming: ToolNaming | undefined;
  const namingOf = (): ToolNaming => (naming ??= createToolNaming((tools ?? []).map((tool) => tool.name)));
  if (items) {
    tools = [];
    const list = tools;
    eachObject(ctx, items, 'tools', (item, path) => {
      switch (item.type) {
        case 'function': {
          const tool = readFunctionTool(ctx, item, path, 'parameters');
          if (tool) list.push(tool);
          return;
        }
        case 'custom': {
          const tool = readCustomTool(ctx, item, path);
          if (tool) list.push(tool);
          return;
        }
        case 'mcp': {
          const set = readResponsesMcpTool(ctx, item, path);
          if (set) (mcp ??= []).push(set);
          return;
        }
        case 'namespace':
          // Flattened once every top-level name is known, so that no flat name takes a top-level one.
          (namespaces ??= []).push({ at: list.length, item, path });
          return;
        default:
          // The hosted set grows every few months; anything else is dropped, not refused.
          dropField(ctx, 'responses', 'tools.*[built-in]');
      }
    });
    if (namespaces) {
      const flat = namingOf();
      const placed = namespaces.map(({ at: index, item, path }) => ({
        index,
        tools: readNamespace(ctx, item, path, flat),
      }));
      for (let i = placed.length - 1; i >= 0; i--) list.splice(placed[i]!.index, 0, ...placed[i]!.tools);
    }
  }
  return mcp ? { tools, mcp, naming: namingOf } : { tools, naming: namingOf };
}

function readNamespace(ctx: ParseContext, item: JsonObject, path: string, naming: ToolNaming): ToolDefinition[] {
  const namespace = readString(ctx, item, 'name', path, { required: true, nonEmpty: true });
  const description = readString(ctx, item, 'description', path);
  const members = readArray(ctx, item, 'tools', path, { required: true });
  const tools: ToolDefinition[] = [];
  if (!members || namespace === undefined) return tools;
  eachObject(ctx, members, at(path, 'tools'), (member, memberPath) => {
    let tool: ToolDefinition | undefined;
    if (member.type === 'function') tool = readFunctionTool(ctx, member, memberPath, 'parameters');
    else if (member.type === 'custom') tool = readCustomTool(ctx, member, memberPath);
    else addIssue(ctx, at(memberPath, 'type'), 'invalid_value', 'must be function or custom');
    if (!tool) return;
    const declared: DeclaredTool = tool.declared ?? { name: tool.name, kind: 'function' };
    declared.namespace = namespace;
    if (description !== undefined) declared.namespaceDescription = description;
    tools.push({ ...tool, name: naming.flatName(namespace, tool.name), declared });
  });
  return tools;
}

/** A free-form tool as a function whose one string argument carries the text the model writes for it. */
function readCustomTool(ctx: ParseContext, item: JsonObject, path: string): ToolDefinition | undefined {
  const name = readString(ctx, item, 'name', path, { required: true, nonEmpty: true });
  const description = readString(ctx, item, 'description', path);
  const format = readObject(ctx, item, 'format', path);
  if (name === undefined) return undefined;
  const declared: DeclaredTool = { name, kind: 'custom' };
  if (format !== undefined) declared.format = format;
  const tool: ToolDefinition = {
    name,
    parameters: {
      type: 'object',
      properties: { [FREE_FORM_ARGUMENT]: { type: 'string', description: 'The whole free-form input of the tool.' } },
      required: [FREE_FORM_ARGUMENT],
      additionalProperties: false,
    },
    declared,
  };
  const explained = [description, grammarNote(format)].filter((text) => text !== undefined).join('\n\n');
  if (explained !== '') tool.description = explained;
  return tool;
}

/** A grammar the target cannot enforce is at least told to the model, beside the tool's own description. */
function grammarNote(format: JsonObject | undefined): string | undefined {
  if (format?.type !== 'grammar' || typeof format.definition !== 'string') return undefined;
  const syntax = typeof format.syntax === 'string' ? format.syntax : 'formal';
  return `The input must follow this ${syntax} grammar:\n${format.definition}`;
}

export function parseResponsesToolChoice(
  ctx: ParseContext,
  obj: JsonObject,
  tools: readonly ToolDefinition[] | undefined,
): ToolChoice | undefined {
  const choice = obj.tool_choice;
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === 'string') {
    const word = readEnum(ctx, obj, 'tool_choice', '', ['none', 'auto', 'required'] as const);
    return word === undefined ? undefined : { type: word };
  }
  const object = readObject(ctx, obj, 'tool_choice', '');
  if (!object) return undefined;
  if (object.type === 'function' || object.type === 'custom') {
    const name = readString(ctx, object, 'name', 'tool_choice', { required: true, nonEmpty: true });
    return name === undefined ? undefined : { type: 'tool', name: targetName(tools, name, object.type) };
  }
  if (object.type === 'allowed_tools') {
    const mode = readEnum(ctx, object, 'mode', 'tool_choice', ['auto', 'required'] as const, true);
    if (mode === undefined) return undefined;
    dropField(ctx, 'responses', 'tool_choice.tools');
    return { type: mode };
  }
  if (typeof object.type !== 'string') {
    addIssue(ctx, 'tool_choice.type', 'required', 'is required');
    return undefined;
  }
  addIssue(
    ctx,
    'tool_choice',
    'unsupported',
    `tool_choice forces the hosted tool \`${object.type}\`, which no target behind this model can run ` +
      '(hosted tools are not routed through the gateway); offer it as a function tool, or use "auto"',
  );
  return undefined;
}

/**
 * The name the target knows for a forced tool: a top-level tool of that name and kind first, else the first
 * declared one of that name (a namespace's function, named by its own name), else the name as given.
 */
function targetName(tools: readonly ToolDefinition[] | undefined, name: string, kind: 'function' | 'custom'): string {
  let inNamespace: string | undefined;
  for (const tool of tools ?? []) {
    const declaredKind = tool.declared?.kind ?? 'function';
    if (declaredKind !== kind) continue;
    if (!tool.declared?.namespace && (tool.declared?.name ?? tool.name) === name) return tool.name;
    if (inNamespace === undefined && tool.declared?.name === name) inNamespace = tool.name;
  }
  return inNamespace ?? name;
}

import type { McpToolSet } from './ir';
import { isObject, type JsonObject } from './json';
import { addIssue, at, readArray, readBoolean, readObject, readString, type ParseContext } from './parse-context';

/**
 * The callers' remote MCP tools, which the gateway runs itself against the caller's registered tool servers
 * (docs/mcp.md "MCP tools in model calls"): a Responses `{"type":"mcp"}` tool and a Messages `mcp_servers` entry.
 * Only what names the server and narrows its tools is read. Credentials the caller sends with them
 * (`headers`, `authorization`, `authorization_token`) are never used: the gateway reaches a server it knows with
 * the credentials stored for it, so a model call is never a way to reach an address of the caller's choosing.
 */

/** A Responses `mcp` tool (OpenAI's `MCPTool`). */
export function readResponsesMcpTool(ctx: ParseContext, item: JsonObject, path: string): McpToolSet | undefined {
  const label = readString(ctx, item, 'server_label', path, { required: true, nonEmpty: true });
  const url = readString(ctx, item, 'server_url', path, { nonEmpty: true });
  // OpenAI's connectors and tunnels reach servers the gateway does not know.
  for (const field of ['connector_id', 'tunnel_id'])
    if (item[field] !== undefined && item[field] !== null)
      addIssue(ctx, at(path, field), 'unsupported', 'is not served; name a tool server registered with the gateway');
  const allowedTools = readResponsesAllowedTools(ctx, item, path);
  checkApproval(ctx, item.require_approval, at(path, 'require_approval'));
  if (label === undefined) return undefined;
  return toolSet(label, url, allowedTools, { label: at(path, 'server_label'), url: at(path, 'server_url') });
}

/** `allowed_tools`: a list of names, or `{tool_names}` (its `read_only` filter cannot be honoured: refused). */
function readResponsesAllowedTools(ctx: ParseContext, item: JsonObject, path: string): string[] | undefined {
  const value = item.allowed_tools;
  if (value === undefined || value === null) return undefined;
  const where = at(path, 'allowed_tools');
  if (Array.isArray(value)) return readNames(ctx, value, where);
  if (!isObject(value)) {
    addIssue(ctx, where, 'invalid_type', 'expected an array of tool names or an object with tool_names');
    return undefined;
  }
  if (value.read_only === true)
    addIssue(ctx, at(where, 'read_only'), 'unsupported', 'tools are not filtered by annotation; list tool_names');
  const names = readArray(ctx, value, 'tool_names', where);
  return names && readNames(ctx, names, at(where, 'tool_names'));
}

/**
 * The gateway runs the calls a model makes within the request: it cannot pause for the caller's approval. So
 * `never` (or nothing) is the only answer it can honour; anything that asks approval for some tool is refused.
 */
function checkApproval(ctx: ParseContext, value: unknown, where: string): void {
  if (value === undefined || value === null || value === 'never') return;
  const asks =
    value === 'always' ||
    !isObject(value) ||
    (isObject(value.always) && Array.isArray(value.always.tool_names) && value.always.tool_names.length > 0) ||
    (value.always !== undefined && value.always !== null && !isObject(value.always));
  if (asks)
    addIssue(
      ctx,
      where,
      'unsupported',
      'must be "never": the gateway runs the MCP tools itself and cannot pause a call for approval',
    );
}

/** A Messages `mcp_toolset` tool (the `mcp-client-2025-11-20` beta): which tools of one server are offered. */
export interface McpToolset {
  server: string;
  path: string;
  /** Offered unless disabled: the default, or each tool's own `enabled`. */
  enabledByDefault: boolean;
  enabled: string[];
  disabled: string[];
}

export function readMcpToolset(ctx: ParseContext, item: JsonObject, path: string): McpToolset | undefined {
  const server = readString(ctx, item, 'mcp_server_name', path, { required: true, nonEmpty: true });
  const defaults = readObject(ctx, item, 'default_config', path);
  const configs = readObject(ctx, item, 'configs', path);
  const toolset: McpToolset = {
    server: server ?? '',
    path,
    enabledByDefault: (defaults && readBoolean(ctx, defaults, 'enabled', at(path, 'default_config'))) ?? true,
    enabled: [],
    disabled: [],
  };
  for (const [name, config] of Object.entries(configs ?? {})) {
    if (!isObject(config)) {
      addIssue(ctx, at(at(path, 'configs'), name), 'invalid_type', 'expected an object');
      continue;
    }
    const enabled = readBoolean(ctx, config, 'enabled', at(at(path, 'configs'), name));
    if (enabled === true) toolset.enabled.push(name);
    if (enabled === false) toolset.disabled.push(name);
  }
  return server === undefined ? undefined : toolset;
}

/**
 * A Messages request's `mcp_servers` (Anthropic's MCP connector), narrowed by each server's
 * `tool_configuration` or by the `mcp_toolset` tool that names it; a server whose tools are disabled is left out.
 */
export function readMessagesMcpServers(
  ctx: ParseContext,
  obj: JsonObject,
  toolsets: readonly McpToolset[] = [],
): McpToolSet[] | undefined {
  const items = readArray(ctx, obj, 'mcp_servers', '');
  for (const toolset of toolsets) {
    const named = items?.some((item) => isObject(item) && item.name === toolset.server);
    if (!named)
      addIssue(ctx, at(toolset.path, 'mcp_server_name'), 'invalid_value', 'must name a server of mcp_servers');
  }
  if (!items) return undefined;
  const sets: McpToolSet[] = [];
  items.forEach((item, index) => {
    const path = at('mcp_servers', index);
    if (!isObject(item)) {
      addIssue(ctx, path, 'invalid_type', 'expected an object');
      return;
    }
    if (item.type !== 'url') addIssue(ctx, at(path, 'type'), 'invalid_value', 'must be url');
    const url = readString(ctx, item, 'url', path, { required: true, nonEmpty: true });
    const name = readString(ctx, item, 'name', path, { required: true, nonEmpty: true });
    const config = readObject(ctx, item, 'tool_configuration', path);
    const enabled = config && readBoolean(ctx, config, 'enabled', at(path, 'tool_configuration'));
    const names = config && readArray(ctx, config, 'allowed_tools', at(path, 'tool_configuration'));
    const allowedTools = names && readNames(ctx, names, at(path, 'tool_configuration.allowed_tools'));
    if (name === undefined || url === undefined || enabled === false) return;
    const set = toolSet(name, url, allowedTools, { label: at(path, 'name'), url: at(path, 'url') });
    const toolset = toolsets.find((candidate) => candidate.server === name);
    if (toolset?.enabledByDefault === false) {
      if (toolset.enabled.length === 0) return;
      set.allowedTools = toolset.enabled.filter((tool) => set.allowedTools?.includes(tool) ?? true);
    } else if (toolset && toolset.disabled.length > 0) {
      set.excludedTools = toolset.disabled;
    }
    sets.push(set);
  });
  return sets;
}

function readNames(ctx: ParseContext, values: unknown[], where: string): string[] {
  const names: string[] = [];
  values.forEach((value, index) => {
    if (typeof value === 'string') names.push(value);
    else addIssue(ctx, at(where, index), 'invalid_type', 'expected a string');
  });
  return names;
}

function toolSet(
  label: string,
  url: string | undefined,
  allowedTools: string[] | undefined,
  params: McpToolSet['params'],
): McpToolSet {
  const set: McpToolSet = { label, params };
  if (url !== undefined) set.url = url;
  if (allowedTools !== undefined) set.allowedTools = allowedTools;
  return set;
}

/** Whether a Responses body declares an `mcp` tool: read on every call, so without parsing anything else. */
export function responsesAsksForMcp(body: Readonly<Record<string, unknown>>): boolean {
  const tools = body.tools;
  return Array.isArray(tools) && tools.some((tool) => isObject(tool) && tool.type === 'mcp');
}

/** Whether a Messages body declares `mcp_servers`. */
export function messagesAsksForMcp(body: Readonly<Record<string, unknown>>): boolean {
  return Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0;
}

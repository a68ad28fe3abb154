import { modelAllowed } from '@sbc/catalog';

/**
 * Which tool servers and tools a caller may use through the MCP gateway: the one decision that both `tools/list`
 * and `tools/call` ask, so a key can never list a tool it cannot call nor call one it cannot list (the failure
 * the peers' gateways keep shipping, each time from two code paths deciding apart).
 *
 * Inputs, combined here and nowhere else:
 * - the servers of the caller's own account (every credential reaches these);
 * - its team's pool, for a team key (a pooled server whose slug the caller's own account also uses is shadowed by
 *   the caller's own, so a name always means one server);
 * - the key's `allowed_tools`: globs over `<server>__<tool>` that narrow the above and never widen it (absent =
 *   every tool; an empty list = none). The glob rules are those of `allowed_models`.
 */

/** Between a server's slug and a tool's own name at `/mcp`. Slugs are `[a-z0-9-]`, so the first one splits. */
export const TOOL_NAME_SEPARATOR = '__';

/** What the decision needs of a tool server; the gateway's records carry more (url, credentials). */
export interface ToolServerRef {
  slug: string;
}

export interface McpCaller {
  /** Set for a team key: the team whose pool it sees. */
  orgId?: string;
  /** Globs over `<server>__<tool>`; absent (undefined or null) = every tool. */
  allowedTools?: readonly string[] | null;
}

export interface McpAccessInputs<S extends ToolServerRef> {
  caller: McpCaller;
  /** The servers of the caller's own account. */
  accountServers: readonly S[];
  /** The pool of the caller's team: read for a team key only. */
  teamPool?: readonly S[];
}

/** The servers a caller may reach, each under one slug, with the key's globs to apply per tool. */
export interface McpAccess<S extends ToolServerRef> {
  readonly servers: readonly S[];
  readonly bySlug: ReadonlyMap<string, S>;
  readonly allowedTools: readonly string[] | null | undefined;
}

/** A tool as a server lists it: its own name and whatever else the server said about it. */
export interface NamedTool {
  name: string;
}

export interface ToolGrant<S extends ToolServerRef, T extends NamedTool> {
  server: S;
  tool: T;
  /** `<server>__<tool>`: the name at `/mcp`, the usage row's `model`, what the globs match. */
  qualifiedName: string;
}

export type ToolRefusal =
  /** The name is not `<server>__<tool>` (at `/mcp`). */
  | 'malformed_name'
  /** No server the caller may reach has that slug: another account's servers look exactly like this. */
  | 'unknown_server'
  /** The server does not list the tool, or the key's globs leave it out: the same answer, so nothing leaks. */
  | 'unknown_tool';

export function qualifiedToolName(slug: string, tool: string): string {
  return `${slug}${TOOL_NAME_SEPARATOR}${tool}`;
}

/** Splits `<server>__<tool>` at its first separator; undefined when either side would be empty. */
export function splitQualifiedToolName(name: string): { slug: string; tool: string } | undefined {
  const at = name.indexOf(TOOL_NAME_SEPARATOR);
  if (at <= 0) return undefined;
  const tool = name.slice(at + TOOL_NAME_SEPARATOR.length);
  return tool === '' ? undefined : { slug: name.slice(0, at), tool };
}

/**
 * The servers a caller reaches: its own account's, and for a team key its team's pool after them. A pool never
 * reaches a personal key, session or device token. Within each, the first server given under a slug wins.
 */
export function decideMcpAccess<S extends ToolServerRef>(inputs: McpAccessInputs<S>): McpAccess<S> {
  const { caller } = inputs;
  const candidates =
    caller.orgId === undefined ? inputs.accountServers : [...inputs.accountServers, ...(inputs.teamPool ?? [])];
  const bySlug = new Map<string, S>();
  for (const server of candidates) if (!bySlug.has(server.slug)) bySlug.set(server.slug, server);
  return { servers: [...bySlug.values()], bySlug, allowedTools: caller.allowedTools };
}

/** The one per-tool rule: the server is reachable, lists the tool, and the key's globs admit its qualified name. */
export function toolAllowed<S extends ToolServerRef>(
  access: McpAccess<S>,
  slug: string,
  tool: string,
  listed: readonly NamedTool[],
): boolean {
  if (!access.bySlug.has(slug)) return false;
  if (!listed.some((candidate) => candidate.name === tool)) return false;
  return modelAllowed(access.allowedTools, qualifiedToolName(slug, tool));
}

/**
 * What `tools/list` shows at `/mcp`: every tool of every reachable server that `toolAllowed` admits. `toolsOf`
 * gives what a server listed (servers that could not be asked give nothing).
 */
export function listAllowedTools<S extends ToolServerRef, T extends NamedTool>(
  access: McpAccess<S>,
  toolsOf: (server: S) => readonly T[],
): ToolGrant<S, T>[] {
  const grants: ToolGrant<S, T>[] = [];
  for (const server of access.servers) {
    const tools = toolsOf(server);
    for (const tool of tools) {
      if (toolAllowed(access, server.slug, tool.name, tools))
        grants.push({ server, tool, qualifiedName: qualifiedToolName(server.slug, tool.name) });
    }
  }
  return grants;
}

/**
 * What `tools/call` may run for a qualified name, by the same rule as listing. `toolsOf` gives what the server
 * listed, so a tool the server no longer lists is refused as listing would leave it out.
 */
export function resolveToolCall<S extends ToolServerRef, T extends NamedTool>(
  access: McpAccess<S>,
  name: string,
  toolsOf: (server: S) => readonly T[],
): ToolGrant<S, T> | { refused: ToolRefusal } {
  const parts = splitQualifiedToolName(name);
  if (!parts) return { refused: 'malformed_name' };
  return resolveServerToolCall(access, parts.slug, parts.tool, toolsOf);
}

/** `tools/call` at `/mcp/{slug}`: the tool under its own name, decided by the same rule. */
export function resolveServerToolCall<S extends ToolServerRef, T extends NamedTool>(
  access: McpAccess<S>,
  slug: string,
  tool: string,
  toolsOf: (server: S) => readonly T[],
): ToolGrant<S, T> | { refused: ToolRefusal } {
  const server = access.bySlug.get(slug);
  if (!server) return { refused: 'unknown_server' };
  const tools = toolsOf(server);
  const found = tools.find((candidate) => candidate.name === tool);
  if (!found || !toolAllowed(access, slug, tool, tools)) return { refused: 'unknown_tool' };
  return { server, tool: found, qualifiedName: qualifiedToolName(slug, tool) };
}

/** `tools/list` at `/mcp/{slug}`: the server's allowed tools under their own names. */
export function listServerTools<S extends ToolServerRef, T extends NamedTool>(
  access: McpAccess<S>,
  slug: string,
  toolsOf: (server: S) => readonly T[],
): ToolGrant<S, T>[] {
  const server = access.bySlug.get(slug);
  if (!server) return [];
  return listAllowedTools({ ...access, servers: [server] }, toolsOf);
}

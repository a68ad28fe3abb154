import type { ChatResponse, ToolDefinition } from './ir';
import { OPENAI_TOOL_NAME_MAX } from './ids';

/**
 * Anthropic allows tool names of 128 characters, OpenAI 64. Longer names are cut for OpenAI upstreams and a
 * short hash of the full name keeps two long names with the same start apart. The cut is deterministic, so the
 * definition, the `tool_choice` and every replayed call in the history agree without shared state, and the
 * gateway maps the upstream's answers back with `toolNameMap`.
 */
const HASH_LENGTH = 8;

/** FNV-1a (32-bit): tiny, stable across processes, and collisions only matter between long names of one request. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(HASH_LENGTH, '0');
}

export function openAiToolName(name: string): string {
  if (name.length <= OPENAI_TOOL_NAME_MAX) return name;
  return `${name.slice(0, OPENAI_TOOL_NAME_MAX - HASH_LENGTH - 1)}_${fnv1a(name)}`;
}

/** Shortened name → the caller's name, for the tools of one request; empty when no name was shortened. */
export function toolNameMap(tools: ToolDefinition[] | undefined): Map<string, string> {
  const map = new Map<string, string>();
  for (const tool of tools ?? []) {
    const short = openAiToolName(tool.name);
    if (short !== tool.name) map.set(short, tool.name);
  }
  return map;
}

/** Puts the caller's own tool names back into a reply from an OpenAI upstream. */
export function restoreToolNames(response: ChatResponse, tools: ToolDefinition[] | undefined): ChatResponse {
  const map = toolNameMap(tools);
  if (map.size === 0) return response;
  return {
    ...response,
    content: response.content.map((block) =>
      block.type === 'tool_call' && map.has(block.name) ? { ...block, name: map.get(block.name)! } : block,
    ),
  };
}

import type { ChatResponse, DeclaredTool, ToolDefinition } from './ir';
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

// ---------------------------------------------------------------------------------------------------------
// Namespaced and free-form tools (Responses `namespace` and `custom` tools) as plain functions

/** The one argument of a free-form tool offered as a function. */
export const FREE_FORM_ARGUMENT = 'input';

/** Characters every target takes in a function name (OpenAI's and Anthropic's common set). */
const NAME_CHARS = /[^a-zA-Z0-9_-]/g;

/**
 * Names the target sees for one request's tools. Top-level tools keep their own names; each function of a
 * namespace becomes `<namespace>__<name>` when that fits OpenAI's 64 characters, uses only `[a-zA-Z0-9_-]` and
 * is not taken yet (by a top-level tool, as the target sees it, or by another flattened name). Otherwise it is
 * cut and a hash of the pair is appended, salted again until free. Names are given in declaration order, so
 * the same tool list always yields the same names: a definition, a forced choice and every replayed call of
 * the history agree without shared state, and the reply's calls map back through `declaredTools`.
 */
export interface ToolNaming {
  /** The flat name of `name` in `namespace` (assigned on first use, so calls to undeclared tools agree too). */
  flatName(namespace: string, name: string): string;
}

export function createToolNaming(topLevelNames: Iterable<string>): ToolNaming {
  const taken = new Set<string>();
  for (const name of topLevelNames) {
    taken.add(name);
    taken.add(openAiToolName(name));
  }
  const assigned = new Map<string, string>();
  return {
    flatName(namespace, name) {
      const key = `${namespace}\u0000${name}`;
      const known = assigned.get(key);
      if (known !== undefined) return known;
      const plain = `${namespace}__${name}`;
      let flat = plain.replace(NAME_CHARS, '_');
      if (flat !== plain || flat.length > OPENAI_TOOL_NAME_MAX || taken.has(flat)) {
        const stem = flat.slice(0, OPENAI_TOOL_NAME_MAX - HASH_LENGTH - 1);
        for (let salt = 0; ; salt++) {
          flat = `${stem}_${fnv1a(salt === 0 ? key : `${key}\u0000${salt}`)}`;
          if (!taken.has(flat)) break;
        }
      }
      taken.add(flat);
      assigned.set(key, flat);
      return flat;
    },
  };
}

/** Flat name → how the caller declared it, for the request's declared tools; undefined when it has none. */
export function declaredTools(tools: readonly ToolDefinition[] | undefined): Map<string, DeclaredTool> | undefined {
  let map: Map<string, DeclaredTool> | undefined;
  for (const tool of tools ?? []) {
    if (tool.declared) (map ??= new Map()).set(tool.name, tool.declared);
  }
  return map;
}

/**
 * A free-form call's input from the function arguments the target produced: the `input` string, or, from a
 * model that answered otherwise, the only string it gave, else the arguments' text itself.
 */
export function freeFormInput(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args === '' ? '{}' : args);
  } catch {
    return args;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return args;
  const value = (parsed as Record<string, unknown>)[FREE_FORM_ARGUMENT];
  if (typeof value === 'string') return value;
  const strings = Object.values(parsed).filter((item): item is string => typeof item === 'string');
  return strings.length === 1 ? strings[0]! : args;
}

import type { Conversation, ToolSpec } from './conversation';
import { htmlPage, wantsHtmlPage } from './html-page';
import { chunkText, splitIntoPieces } from './tokens';

/**
 * Decides what the simulator says. Deterministic: the same conversation and limits always give the same
 * pieces, so tests can assert content and token counts.
 *
 * Triggers (in the last user message):
 * - the word "weather" or the marker `sim:tool`, when the request declares function tools: call a tool;
 *   `tool_choice` required/any/named forces a call, `none` forbids it;
 * - `sim:call:<tool name>`, optionally followed by one space and a JSON object: call that declared tool with those
 *   arguments (else the schema's example arguments). Real agents declare dozens of tools, so a test names the one
 *   its tool loop should take, and what it should do. A tool is named as this engine sees it: a function of a
 *   Responses namespace by its own name or as `<namespace>.<name>`; a free-form (custom) tool gets the object's
 *   `input` string as its input (else the object's JSON text, else `simulated input`);
 * - `sim-tokens:<N>`: the text reply has exactly N pieces (padded with numbered filler words);
 * - `sim:html` (and `sim:broken`, `sim:fix`): the reply is a small HTML app (see html-page.ts).
 *
 * A request for structured output gets JSON text: an object built from its schema like tool arguments, or
 * `{"reply": …}` in JSON-object mode.
 */

type TextFinish = 'end' | 'length' | 'stop_sequence';

interface TextReply {
  kind: 'text';
  /** Output pieces, one token each; joined they form the reply text. */
  pieces: string[];
  finish: TextFinish;
  /** The stop sequence that ended the reply, when `finish` is `stop_sequence`. */
  stopSequence: string | null;
}

interface ToolReply {
  kind: 'tool';
  name: string;
  /** The namespace of a Responses namespace tool's function. */
  namespace?: string;
  /** A Responses custom tool: `arguments` is its free-form input, not JSON. */
  freeForm?: boolean;
  /** Argument JSON (a custom tool's input text), as a string. */
  arguments: string;
  /** The arguments in delta slices, one token each. */
  pieces: string[];
}

export type ReplyPlan = TextReply | ToolReply;

export interface ReplyLimits {
  /** Most output tokens allowed; undefined means no limit. */
  maxTokens: number | undefined;
  stop: string[];
}

const PROMPT_WORDS = 12;
/**
 * Tool results often open with a preamble of their own (Codex's shell output starts with a chunk id, the wall time,
 * the exit code and a token count), so the reply quotes more of them, enough to carry what the tool read.
 */
const TOOL_RESULT_WORDS = 40;
const MAX_FILLER_TOKENS = 100_000;
const ARGUMENT_SLICE_CHARS = 8;

function firstWords(text: string, count = PROMPT_WORDS): string {
  const words = text.trim().split(/\s+/).filter(Boolean);
  return words.slice(0, count).join(' ') + (words.length > count ? ' …' : '');
}

/** Deterministic arguments for a tool from its JSON schema: one value per declared property. */
export function exampleArguments(schema: unknown): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (properties === null || typeof properties !== 'object') return args;
  for (const [key, property] of Object.entries(properties as Record<string, unknown>)) {
    args[key] = exampleValue(key, property);
  }
  return args;
}

function exampleValue(key: string, property: unknown): unknown {
  const spec = (property ?? {}) as { type?: unknown; enum?: unknown };
  if (Array.isArray(spec.enum) && spec.enum.length > 0) return spec.enum[0];
  const type = Array.isArray(spec.type) ? spec.type[0] : spec.type;
  switch (type) {
    case 'string':
      return `simulated ${key}`;
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return exampleArguments(property);
    default:
      return null;
  }
}

interface ToolCallPlan {
  tool: ToolSpec;
  /** Arguments the prompt spelled out, if it did. */
  args?: Record<string, unknown>;
}

function chooseTool(conversation: Conversation): ToolCallPlan | undefined {
  const { tools, toolChoice, toolResult, lastUserText } = conversation;
  const first = tools[0];
  if (!first || toolChoice.mode === 'none' || toolResult !== undefined) return undefined;
  if (toolChoice.name !== undefined) return { tool: tools.find((tool) => tool.name === toolChoice.name) ?? first };
  const named = namedCall(lastUserText, tools);
  if (named) return named;
  if (toolChoice.mode === 'required') return { tool: first };
  return /\bweather\b/i.test(lastUserText) || lastUserText.includes('sim:tool') ? { tool: first } : undefined;
}

/** `sim:call:<name> {json}`: the declared tool of that name, with the JSON object after it when it parses. */
function namedCall(text: string, tools: ToolSpec[]): ToolCallPlan | undefined {
  const match = /sim:call:([^\s{]+)/.exec(text);
  const tool =
    match &&
    tools.find(
      (candidate) =>
        candidate.name === match[1] ||
        (candidate.namespace !== undefined && `${candidate.namespace}.${candidate.name}` === match[1]),
    );
  if (!match || !tool) return undefined;
  const rest = text.slice(match.index + match[0].length);
  const json = rest.startsWith(' {') ? leadingObject(rest.slice(1)) : undefined;
  return json ? { tool, args: json } : { tool };
}

/** The JSON object at the start of `text` (up to its matching brace), or undefined when there is none. */
function leadingObject(text: string): Record<string, unknown> | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth += 1;
    else if (char === '}' && --depth === 0) {
      try {
        const value: unknown = JSON.parse(text.slice(0, i + 1));
        return value !== null && typeof value === 'object' && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function freeFormInput(args: Record<string, unknown> | undefined): string {
  if (!args) return 'simulated input';
  return typeof args.input === 'string' ? args.input : JSON.stringify(args);
}

function replyText(conversation: Conversation): string {
  const output = conversation.output;
  if (output && 'schema' in output) return JSON.stringify(exampleArguments(output.schema));
  if (output) return JSON.stringify({ reply: replyText({ ...conversation, output: undefined }) });
  if (conversation.toolResult !== undefined) {
    const quoted = firstWords(conversation.toolResult, TOOL_RESULT_WORDS);
    return `Simulated reply using the tool result: ${quoted || '(empty)'}`;
  }
  if (wantsHtmlPage(conversation.lastUserText)) return htmlPage(conversation.lastUserText);
  const prompt = firstWords(conversation.lastUserText);
  return prompt ? `Simulated reply to: ${prompt}` : 'Simulated reply to an empty prompt.';
}

function requestedLength(text: string): number | undefined {
  const match = /sim-tokens:(\d+)/.exec(text);
  return match ? Math.min(Number(match[1]), MAX_FILLER_TOKENS) : undefined;
}

/** Pieces covering exactly the first `chars` characters of the joined pieces (the last one may be cut). */
function piecesUpTo(pieces: string[], chars: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const piece of pieces) {
    if (used >= chars) break;
    const part = piece.slice(0, chars - used);
    kept.push(part);
    used += part.length;
  }
  return kept;
}

export function planReply(conversation: Conversation, limits: ReplyLimits): ReplyPlan {
  const call = chooseTool(conversation);
  if (call) {
    const { tool } = call;
    const args = tool.freeForm ? freeFormInput(call.args) : JSON.stringify(call.args ?? exampleArguments(tool.schema));
    const pieces = chunkText(args, ARGUMENT_SLICE_CHARS);
    // A call is never cut mid-JSON: when it cannot fit the limit, the (cut) text reply is sent instead.
    if (limits.maxTokens === undefined || pieces.length <= limits.maxTokens) {
      const reply: ToolReply = { kind: 'tool', name: tool.name, arguments: args, pieces };
      if (tool.namespace !== undefined) reply.namespace = tool.namespace;
      if (tool.freeForm) reply.freeForm = true;
      return reply;
    }
  }

  let pieces = splitIntoPieces(replyText(conversation));
  const length = requestedLength(conversation.lastUserText);
  if (length !== undefined) {
    pieces = pieces.slice(0, length);
    for (let i = pieces.length; i < length; i += 1) pieces.push(` filler-${i + 1}`);
  }

  let finish: TextFinish = 'end';
  let stopSequence: string | null = null;
  const text = pieces.join('');
  let cutAt = Infinity;
  for (const stop of limits.stop) {
    const at = stop ? text.indexOf(stop) : -1;
    if (at >= 0 && at < cutAt) {
      cutAt = at;
      stopSequence = stop;
    }
  }
  if (stopSequence !== null) {
    pieces = piecesUpTo(pieces, cutAt);
    finish = 'stop_sequence';
  }
  if (limits.maxTokens !== undefined && pieces.length > limits.maxTokens) {
    pieces = pieces.slice(0, limits.maxTokens);
    finish = 'length';
    stopSequence = null;
  }
  return { kind: 'text', pieces, finish, stopSequence };
}

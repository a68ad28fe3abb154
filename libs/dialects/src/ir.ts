/**
 * The neutral form every dialect is parsed into and rendered from. Three dialects meet through this one
 * shape, so each dialect needs one parser and one renderer per direction instead of a translator per pair.
 *
 * The shape leans on Anthropic Messages (system hoisted out of the turns, tool results as blocks of a user
 * turn, one block list per turn) because that is the strictest of the three: anything Messages can carry,
 * the OpenAI dialects can carry too, and the renderers split or merge as their dialect needs.
 */

/** The caller's route: the three chat dialects, and OpenAI's embeddings. */
export type Dialect = 'chat' | 'responses' | 'messages' | 'embeddings';

/** Where an upstream engine speaks: OpenAI-compatible upstreams take chat completions (or responses). */
export type UpstreamDialect = 'openai' | 'anthropic';

// ---------------------------------------------------------------------------------------------------------
// Content

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ImageBlock {
  type: 'image';
  /** Either a remote URL or inline base64 data with its media type. */
  source: { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };
  /** OpenAI's `detail` hint; Anthropic has none and drops it. */
  detail?: 'auto' | 'low' | 'high' | 'original';
}

export interface DocumentBlock {
  type: 'document';
  /** Inline base64 data (PDF and the like) or a remote URL. */
  source: { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };
  filename?: string;
}

export interface ToolCallBlock {
  type: 'tool_call';
  /** The call id as the caller knows it (`call_…`, `toolu_…`); renderers sanitise for their dialect. */
  id: string;
  name: string;
  /** Arguments as a JSON text (OpenAI's form). Renderers for Messages parse it; empty text means `{}`. */
  arguments: string;
}

export interface ToolResultBlock {
  type: 'tool_result';
  /** The id of the call this answers. */
  callId: string;
  content: Array<TextBlock | ImageBlock | DocumentBlock>;
  /** Anthropic's `is_error`; OpenAI has no field for it and keeps the text only. */
  isError?: boolean;
}

export interface ReasoningBlock {
  type: 'reasoning';
  /** Visible reasoning or its summary. */
  text: string;
  /**
   * Proof of origin that must round-trip unchanged: Anthropic's thinking `signature`, or OpenAI's
   * `encrypted_content`. Only meaningful when replayed to the vendor that issued it (`origin`).
   */
  signature?: string;
  /** Anthropic `redacted_thinking` data: opaque, replayed unchanged, never shown. */
  redacted?: string;
  /** The dialect that produced it; Messages renderers send only `messages`-signed reasoning as thinking. */
  origin?: UpstreamDialect;
  /** OpenAI Responses reasoning item id (`rs_…`), kept for replay to Responses. */
  itemId?: string;
}

export interface RefusalBlock {
  type: 'refusal';
  text: string;
}

export type UserBlock = TextBlock | ImageBlock | DocumentBlock | ToolResultBlock;
export type AssistantBlock = TextBlock | ToolCallBlock | ReasoningBlock | RefusalBlock;
export type Block = UserBlock | AssistantBlock;

/**
 * One turn. `system` turns keep mid-conversation system/developer text in place for the OpenAI renderers;
 * the Messages renderer hoists them into the top-level `system` (or user text when they come later).
 */
export type Message =
  | { role: 'system'; content: TextBlock[] }
  | { role: 'user'; content: UserBlock[] }
  | { role: 'assistant'; content: AssistantBlock[] };

// ---------------------------------------------------------------------------------------------------------
// Requests

export interface ToolDefinition {
  /** The function's name as every target sees it (for a `declared` tool: flattened, unique in the request). */
  name: string;
  description?: string;
  /** JSON Schema of the arguments; absent means no parameters (`{type:"object",properties:{}}`). */
  parameters?: Record<string, unknown>;
  strict?: boolean;
  /** Set when a Responses caller declared it otherwise than as a top-level function (tool-names.ts). */
  declared?: DeclaredTool;
}

/**
 * A Responses tool that targets see as a plain function: one of a `namespace` tool's functions, or a `custom`
 * (free-form) tool, offered as a function whose one string argument is its input. Calls to it are rendered
 * back to the caller under these names (`function_call` with its `namespace`, or `custom_tool_call`).
 */
export interface DeclaredTool {
  /** The tool's own name, inside its namespace when it has one. */
  name: string;
  namespace?: string;
  /** The namespace's description, to echo the caller's tool list as sent. */
  namespaceDescription?: string;
  kind: 'function' | 'custom';
  /** A custom tool's input format (`{type:"text"}` or a grammar), echoed as sent. */
  format?: Record<string, unknown>;
}

export type ToolChoice =
  | { type: 'auto' }
  | { type: 'none' }
  /** Must call some tool (`required` / Anthropic `any`). */
  | { type: 'required' }
  | { type: 'tool'; name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ReasoningRequest {
  /** OpenAI's effort, or Anthropic `output_config.effort`. */
  effort?: ReasoningEffort;
  /** Anthropic `thinking.budget_tokens` when the caller set one. */
  budgetTokens?: number;
  /** Anthropic `thinking.type`; `adaptive` lets the model decide. */
  mode?: 'enabled' | 'disabled' | 'adaptive';
  /** Responses `reasoning.summary`. */
  summary?: 'auto' | 'concise' | 'detailed';
}

export interface ChatRequest {
  /** The model id as the caller named it (the router replaces it with the upstream's id). */
  model: string;
  messages: Message[];
  stream: boolean;
  /** Caller's cap on output tokens, whatever its dialect called it. */
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  /** Anthropic only; OpenAI renderers drop it. */
  topK?: number;
  stop?: string[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  reasoning?: ReasoningRequest;
  /** End-user id: OpenAI `user`/`safety_identifier`, Anthropic `metadata.user_id`. */
  user?: string;
  /** OpenAI metadata map; Messages cannot carry it. */
  metadata?: Record<string, string>;
  /** The caller asked for usage in the stream (chat `stream_options.include_usage`). */
  includeStreamUsage?: boolean;
  /** A Responses call's state fields (absent for the other dialects). */
  responses?: ResponsesFields;
  /**
   * The caller's remote MCP tools that the gateway runs itself (a Responses `mcp` tool, a Messages `mcp_servers`
   * entry): never sent to a target as such; the edge offers their tools as functions and runs the calls.
   */
  mcp?: McpToolSet[];
  /**
   * Caller fields the neutral form cannot carry, as dotted paths (e.g. `logit_bias`, `n`). The gateway
   * reports them in the `x-sbc-dropped-fields` header; they are listed in `DROPPED_FIELDS`.
   */
  dropped: string[];
}

/** One remote MCP server as the caller named it in its request, for the gateway to run. */
export interface McpToolSet {
  /** Responses `server_label`, Messages `name`: the server's name in the reply's items. */
  label: string;
  /** Responses `server_url`, Messages `url`: when given, the server is the caller's registered one at this URL. */
  url?: string;
  /** The tools to offer, by their names on the server; absent = every tool the key may use. */
  allowedTools?: string[];
  /** Tools not to offer, by their names on the server (a Messages `mcp_toolset` that disables some). */
  excludedTools?: string[];
  /** Where the caller named the server, for a refusal's `param` (`tools.2.server_label`, `mcp_servers.0.url`). */
  params: { label: string; url: string };
}

/**
 * What a Responses call says about server-side state: echoed in its `response` object, and read by the edge,
 * which keeps stored responses and expands `previous_response_id` (the parser only reads them).
 */
export interface ResponsesFields {
  /** `store`: keep the response to be read back and continued (OpenAI's default: true). */
  store: boolean;
  /** `previous_response_id`: the stored response this call continues. */
  previousResponseId?: string;
  /** `instructions` as given (also the first system turn); a continuation does not carry them over. */
  instructions?: string;
  /** The id the reply is given: set by the edge for a response it keeps, else the upstream's id is used. */
  id?: string;
}

// ---------------------------------------------------------------------------------------------------------
// Replies

export type StopReason =
  'end_turn' | 'stop_sequence' | 'max_tokens' | 'tool_use' | 'refusal' | 'pause_turn' | 'context_window_exceeded';

/** Token counts in OpenAI's convention: `inputTokens` includes cache reads and writes. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Part of `outputTokens` spent on reasoning, when the upstream says. */
  reasoningTokens?: number;
}

export interface ChatResponse {
  /** Upstream's id; renderers prefix it for their dialect when it lacks the dialect's prefix. */
  id: string;
  /** Model id to show the caller. */
  model: string;
  /** Unix seconds. */
  created: number;
  content: AssistantBlock[];
  stopReason: StopReason;
  /** The stop sequence that matched, when known. */
  stopSequence?: string;
  usage: Usage;
  /** What the gateway did with the caller's MCP tools before this reply (`ChatRequest.mcp`), in order. */
  mcp?: McpItem[];
}

/**
 * One step the gateway took with a caller's MCP tools, shown before the reply's content: the tools it offered
 * from a server (Responses `mcp_list_tools`), or a call it ran (Responses `mcp_call`, Messages `mcp_tool_use` and
 * `mcp_tool_result`).
 */
export type McpItem =
  | {
      type: 'mcp_list_tools';
      serverLabel: string;
      tools: Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }>;
    }
  | {
      type: 'mcp_call';
      serverLabel: string;
      /** The tool's own name on its server. */
      name: string;
      /** Arguments as a JSON text. */
      arguments: string;
      /** The tool's text output: its result, or what failed when `isError`. */
      output: string;
      isError: boolean;
    };

// ---------------------------------------------------------------------------------------------------------
// Streams

/**
 * Events of one streamed reply, in order. Parsers turn upstream SSE events into these; renderers turn them
 * into the caller's frames and own all block bookkeeping (which block is open, indices, sequence numbers).
 * A parser never emits block starts or stops: a run of `text` deltas is one text block, a new `tool_call`
 * start closes whatever was open.
 */
export type StreamEvent =
  | { type: 'start'; id: string; model: string; created: number; usage?: Partial<Usage> }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  /** The signature of the reasoning run in progress (arrives once, before the run ends). */
  | { type: 'reasoning_signature'; signature: string; origin: UpstreamDialect }
  /** A whole redacted-thinking block. */
  | { type: 'reasoning_redacted'; data: string }
  | { type: 'refusal'; text: string }
  /** A new tool call; `index` counts calls from 0 in the order they started. */
  | { type: 'tool_call'; index: number; id: string; name: string }
  | { type: 'tool_arguments'; index: number; delta: string }
  /** A whole step the gateway took with the caller's MCP tools (`McpItem`), before any content. */
  | { type: 'mcp'; item: McpItem }
  /** Cumulative usage so far; later values replace earlier ones field by field. */
  | { type: 'usage'; usage: Partial<Usage> }
  | { type: 'stop'; reason: StopReason; stopSequence?: string }
  /** The upstream failed after the stream began. */
  | { type: 'error'; error: UpstreamFailure }
  /** The upstream finished cleanly (its terminator arrived). */
  | { type: 'end' };

/** One SSE frame to write, already in the caller's dialect. */
export interface SseFrame {
  /** The `event:` line, when the dialect uses one. */
  event?: string;
  /** The `data:` payload (already serialised). */
  data: string;
}

// ---------------------------------------------------------------------------------------------------------
// Errors

/** An error from an upstream or from the gateway itself, before it is rendered into a dialect's body. */
export interface UpstreamFailure {
  /** HTTP status to answer with (before the first byte) or to report in-stream. */
  status: number;
  message: string;
  /** The upstream's own error type or code, when it gave one (kept for OpenAI `code`). */
  code?: string | null;
  param?: string | null;
}

import type { EventTemplate } from './event-template';
import type {
  ChatRequest,
  ChatResponse,
  Dialect,
  SseFrame,
  StopReason,
  StreamEvent,
  UpstreamDialect,
  UpstreamFailure,
  Usage,
} from './ir';
import type { DialectIssue } from './request-error';
import type { SseEvent } from './sse';
import type { StreamRenderer, UpstreamStreamParser } from './stream';

// The adapter records: everything the edge must know about a dialect, so that it looks one record up per
// call and never branches on a dialect's name (STYLE: "Dialects as data"). A caller dialect is what a client
// speaks to the edge; an upstream dialect is what an engine speaks.

/** A streamed reply as the caller's frames: passed through, or translated from another dialect. */
export interface CallerStream {
  push(event: SseEvent): { frames: SseFrame[]; events: StreamEvent[] };
  /**
   * The text deltas `push` now passes through by template, as bytes (StreamPassthrough.textTemplate); never for
   * translated streams.
   */
  textTemplate(): EventTemplate | undefined;
  /** Frames that end the stream with an error in the caller's dialect. */
  fail(failure: UpstreamFailure): SseFrame[];
  /** Frames that end the stream as stopped at its output limit, in the caller's dialect. */
  cut(usage: Usage): SseFrame[];
}

export interface CallerStreamOptions {
  /** The model id the caller named, written over the upstream's. */
  model: string;
  /** Chat callers only: they asked for the usage chunk. */
  includeUsage: boolean;
  /** The call's request id, for in-stream error events. */
  requestId: string;
  /** The neutral request, when it was parsed (Responses echoes it; tool names cut for OpenAI are restored from it). */
  request?: ChatRequest;
}

/** A caller dialect whose upstream twin takes the caller's body nearly as it is. */
export interface Passthrough {
  upstream: UpstreamDialect;
  /** Where the engine takes these bodies, when not at its dialect's model-call path (`UpstreamAdapter.path`). */
  path?: '/embeddings';
  /**
   * The caller's body for an engine of the same dialect: the engine's model, the output limit the call was
   * admitted under when the caller set none, and for chat streams usage always requested.
   */
  request(
    body: Readonly<Record<string, unknown>>,
    options: { model: string; outputLimit?: number; stream: boolean },
  ): Record<string, unknown>;
  /**
   * An upstream's non-streamed reply as the caller receives it, its usage and why it stopped (none for
   * embeddings, which do not generate). Owns `raw`.
   */
  reply(
    raw: Record<string, unknown>,
    model: string,
  ): { body: Record<string, unknown>; usage: Usage; stopReason?: StopReason };
  stream(options: CallerStreamOptions): CallerStream;
}

export interface CallerDialect {
  name: Dialect;
  /** The kind of model the route calls (the catalog's): a chat dialect calls chat models, embeddings embedding ones. */
  modelKind: 'chat' | 'embedding';
  /** The fields that carry the caller's output limit, the preferred one first. */
  outputLimitFields: readonly string[];
  /** Whether `null` in an output-limit field means "no limit" (the OpenAI dialects) rather than a bad value. */
  nullOutputLimit: boolean;
  /**
   * The dialect's own checks the edge needs before it routes a body (its turns, its required fields); the
   * neutral parser checks the rest, and only when the call is translated.
   */
  check(body: Readonly<Record<string, unknown>>): DialectIssue[];
  /** The caller's own output cap, when it set one. */
  requestedOutputLimit(body: Readonly<Record<string, unknown>>): number | undefined;
  /** Chat streams only: the caller asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage(body: Readonly<Record<string, unknown>>): boolean;
  /** The body into the neutral form; throws DialectRequestError (400). */
  parse(body: unknown): ChatRequest;
  /**
   * The input's tokens by `countText` (the edge's tokenizer), for a route whose body has no neutral chat form
   * (embeddings); absent, the edge counts the neutral request.
   */
  countInput?(body: Readonly<Record<string, unknown>>, countText: (text: string) => number): number;
  /** A neutral reply in this dialect. */
  renderReply(reply: ChatResponse, request: ChatRequest | undefined): Record<string, unknown>;
  streamRenderer(options: CallerStreamOptions): StreamRenderer;
  /** The dialect's error body. */
  errorBody(failure: UpstreamFailure, requestId: string): Record<string, unknown>;
  /** The status of "overloaded" in this dialect (Anthropic has its own, 529). */
  overloadStatus: number;
  /**
   * A tokens-per-minute limit in the headers this dialect's vendor uses for it (OpenAI's
   * `x-ratelimit-*-tokens`, Anthropic's `anthropic-ratelimit-tokens-*`); `resetMs` is from now.
   */
  tokenLimitHeaders(limit: number, remaining: number, resetMs: number): Record<string, string>;
  /** The response headers that carry the request id where this dialect's SDK reads it. */
  requestIdHeaders(requestId: string): Record<string, string>;
  /** Set when an upstream dialect takes this one's bodies as they are. */
  passthrough?: Passthrough;
  /**
   * Whether a body asks for server-side state (Responses: `store`, true unless said otherwise, or
   * `previous_response_id`), read cheaply from the raw body on every call; absent for dialects that keep none.
   */
  asksForState?(body: Readonly<Record<string, unknown>>): boolean;
  /**
   * Whether a body declares remote MCP tools for the gateway to run (`ChatRequest.mcp`), read cheaply from the raw
   * body on every call; absent for dialects that have none.
   */
  asksForMcp?(body: Readonly<Record<string, unknown>>): boolean;
}

export interface UpstreamAdapter {
  name: UpstreamDialect;
  /** The path of a model call, under the engine's base URL. */
  path: '/chat/completions' | '/messages';
  /** Where the engine counts a prompt's tokens, when its dialect has such a route. */
  countTokensPath?: '/messages/count_tokens';
  renderRequest(request: ChatRequest, model: string, options: { defaultMaxTokens: number }): Record<string, unknown>;
  /** A reply into the neutral form (tool names cut for this dialect restored); throws UpstreamError (`bad_reply`). */
  parseReply(raw: unknown, request: ChatRequest | undefined): ChatResponse;
  /** The usage object of a passed-through reply. */
  usageOf(raw: unknown): Partial<Usage>;
  /** The upstream's stream events as neutral events, tool names restored as the caller declared them. */
  streamParser(request: ChatRequest | undefined): UpstreamStreamParser;
  /** Version and credential headers; `passHeaders` are the caller's headers this dialect forwards. */
  headers(
    apiKey: string | undefined,
    passHeaders: Readonly<Record<string, string>> | undefined,
  ): Record<string, string>;
}

/** A translated stream: the engine's events parsed into neutral ones and rendered in the caller's dialect. */
export function createTranslatedStream(
  caller: CallerDialect,
  upstream: UpstreamAdapter,
  options: CallerStreamOptions,
): CallerStream {
  const parser = upstream.streamParser(options.request);
  const renderer = caller.streamRenderer(options);
  return {
    push(event) {
      const events = parser.push(event);
      const frames: SseFrame[] = [];
      for (const item of events) for (const frame of renderer.render(item)) frames.push(frame);
      return { frames, events };
    },
    textTemplate: () => undefined,
    // Translated streams end through their renderer, which closes whatever block or item is open.
    fail: (failure) => renderer.render({ type: 'error', error: failure }),
    cut: (usage) => [
      ...renderer.render({ type: 'usage', usage }),
      ...renderer.render({ type: 'stop', reason: 'max_tokens' }),
      ...renderer.render({ type: 'end' }),
    ],
  };
}

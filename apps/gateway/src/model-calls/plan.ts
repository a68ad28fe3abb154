import {
  parseChatRequest,
  parseMessagesRequest,
  parseResponsesRequest,
  renderChatRequest,
  renderMessagesRequest,
  type ChatRequest,
  type Dialect,
} from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import type { UpstreamRequest } from '../upstream/client';

/** What the caller sent, read once. */
export interface CallerCall {
  dialect: Dialect;
  body: Record<string, unknown>;
  callerModel: string;
  stream: boolean;
  /** Chat callers only: they asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** The neutral form, parsed when some engine speaks another dialect than the caller. */
  request?: ChatRequest;
  /**
   * The output limit a priced call was admitted under: the caller's own, or the one its reservation pays
   * for. Sent upstream when the caller set none, and enforced on the stream.
   */
  outputLimit?: number;
}

export interface EngineCall {
  path: UpstreamRequest['path'];
  body: string;
  /** Same dialect on both sides: forwarded with the least change, replies passed through. */
  passthrough: boolean;
}

export function isPassthrough(dialect: Dialect, engine: Engine): boolean {
  return (dialect === 'chat' && engine.dialect === 'openai') || (dialect === 'messages' && engine.dialect === 'anthropic');
}

/** Parses the caller's body into the neutral form; throws DialectRequestError (400) on a bad body. */
export function parseCallerRequest(dialect: Dialect, body: unknown): ChatRequest {
  if (dialect === 'chat') return parseChatRequest(body);
  if (dialect === 'responses') return parseResponsesRequest(body);
  return parseMessagesRequest(body);
}

/**
 * The body one engine receives. Same dialect: the caller's body with the engine's model id, and for chat
 * streams usage always requested (the caller's own choice decides only what it sees). Otherwise the neutral
 * form rendered for the engine's dialect, which carries only fields that dialect knows.
 */
export function engineCall(call: CallerCall, engine: Engine, options: { defaultMaxTokens: number }): EngineCall {
  if (isPassthrough(call.dialect, engine)) {
    const body: Record<string, unknown> = { ...call.body, model: engine.model };
    // Messages callers always name max_tokens; a chat caller that did not is held to its reservation.
    if (call.dialect === 'chat' && call.outputLimit !== undefined && requestedMaxTokens(call) === undefined) body.max_completion_tokens = call.outputLimit;
    if (call.dialect === 'chat' && call.stream) {
      const streamOptions = typeof call.body.stream_options === 'object' && call.body.stream_options !== null ? call.body.stream_options : {};
      body.stream_options = { ...streamOptions, include_usage: true };
    }
    return { path: call.dialect === 'chat' ? '/chat/completions' : '/messages', body: JSON.stringify(body), passthrough: true };
  }
  const parsed = call.request!;
  const request = call.outputLimit !== undefined && parsed.maxOutputTokens === undefined ? { ...parsed, maxOutputTokens: call.outputLimit } : parsed;
  if (engine.dialect === 'openai') return { path: '/chat/completions', body: JSON.stringify(renderChatRequest(request, engine.model)), passthrough: false };
  return { path: '/messages', body: JSON.stringify(renderMessagesRequest(request, engine.model, { defaultMaxTokens: options.defaultMaxTokens })), passthrough: false };
}

/** The caller's output cap, whatever its dialect calls it. */
export function requestedMaxTokens(call: CallerCall): number | undefined {
  const { body } = call;
  const value = call.dialect === 'chat' ? (body.max_completion_tokens ?? body.max_tokens) : call.dialect === 'responses' ? body.max_output_tokens : body.max_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

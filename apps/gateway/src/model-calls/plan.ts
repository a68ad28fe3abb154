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
  /** The caller's body as parsed, until a reply is chosen (see `forgetBody`); read it with `bodyOf`. */
  body?: Record<string, unknown>;
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
  /** Once the body is let go and nothing was parsed: the body as sent, to count the prompt of a stream cut short. */
  sent?: Buffer;
}

export interface EngineCall {
  path: UpstreamRequest['path'];
  /** Bytes, not a string: the upstream client keeps these very bytes until the reply ends (a string it copies). */
  body: Buffer;
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

/** The caller's parsed body; there is none once the call's reply was chosen. */
export function bodyOf(call: CallerCall): Record<string, unknown> {
  if (!call.body) throw new Error('The call body was let go when its reply was chosen.');
  return call.body;
}

/**
 * Lets go of the parsed body once a reply is chosen (`sent` is the body that reply's engine was sent). Nothing
 * reads it after that but the count of a stream's prompt when the stream is cut short, which the parsed
 * neutral form serves when there is one. There is none only when every engine is passthrough, so `sent` is
 * then the caller's body in its own dialect with only the model and limits changed: it parses to the same
 * prompt. The upstream client holds those bytes until the reply ends anyway, so a long prompt stays in memory
 * once instead of twice for as long as its stream runs.
 */
export function forgetBody(call: CallerCall, sent: Buffer): void {
  if (!call.request) call.sent = sent;
  call.body = undefined;
}

/** The prompt in neutral form, to count it after the fact; throws DialectRequestError when it cannot be read. */
export function promptOf(call: CallerCall): ChatRequest {
  if (call.request) return call.request;
  return parseCallerRequest(call.dialect, call.sent ? (JSON.parse(call.sent.toString('utf8')) as unknown) : bodyOf(call));
}

/**
 * The body one engine receives. Same dialect: the caller's body with the engine's model id, and for chat
 * streams usage always requested (the caller's own choice decides only what it sees). Otherwise the neutral
 * form rendered for the engine's dialect, which carries only fields that dialect knows.
 */
export function engineCall(call: CallerCall, engine: Engine, options: { defaultMaxTokens: number }): EngineCall {
  if (isPassthrough(call.dialect, engine)) {
    const callerBody = bodyOf(call);
    const body: Record<string, unknown> = { ...callerBody, model: engine.model };
    // Messages callers always name max_tokens; a chat caller that did not is held to its reservation.
    if (call.dialect === 'chat' && call.outputLimit !== undefined && requestedMaxTokens(call) === undefined) body.max_completion_tokens = call.outputLimit;
    if (call.dialect === 'chat' && call.stream) {
      const streamOptions = typeof callerBody.stream_options === 'object' && callerBody.stream_options !== null ? callerBody.stream_options : {};
      body.stream_options = { ...streamOptions, include_usage: true };
    }
    return { path: call.dialect === 'chat' ? '/chat/completions' : '/messages', body: Buffer.from(JSON.stringify(body)) };
  }
  const parsed = call.request!;
  const request = call.outputLimit !== undefined && parsed.maxOutputTokens === undefined ? { ...parsed, maxOutputTokens: call.outputLimit } : parsed;
  if (engine.dialect === 'openai') return { path: '/chat/completions', body: Buffer.from(JSON.stringify(renderChatRequest(request, engine.model))) };
  return { path: '/messages', body: Buffer.from(JSON.stringify(renderMessagesRequest(request, engine.model, { defaultMaxTokens: options.defaultMaxTokens }))) };
}

/** The caller's output cap, whatever its dialect calls it. */
export function requestedMaxTokens(call: CallerCall): number | undefined {
  const body = bodyOf(call);
  const value = call.dialect === 'chat' ? (body.max_completion_tokens ?? body.max_tokens) : call.dialect === 'responses' ? body.max_output_tokens : body.max_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

import type { CallerDialect, ChatRequest, Passthrough } from '@sbc/dialects';
import { upstreamAdapter } from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import type { Target } from '../routing/targets';
import type { UpstreamRequest } from '../upstream/client';

/** What the caller sent, read once (read-call.ts). */
export interface CallerCall {
  /** The caller's dialect, looked up once: everything the call path needs to know of it. */
  adapter: CallerDialect;
  /** The caller's body as parsed, until a reply is chosen (see `forgetBody`); read it with `bodyOf`. */
  body?: Record<string, unknown>;
  /** The model the caller named; once a reply is chosen, the model that answered (it or one of `fallbacks`). */
  callerModel: string;
  /** The body's `models`: tried in order once the named model's targets are exhausted. */
  fallbacks: readonly string[];
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
  /** A hook replaced the neutral request (call-hooks.ts `rewriteRequest`): every engine is sent it translated. */
  translated?: boolean;
}

export interface EngineCall {
  path: UpstreamRequest['path'];
  /** Bytes, not a string: the upstream client keeps these very bytes until the reply ends (a string it copies). */
  body: Buffer;
}

/** The caller dialect's passthrough when the engine takes the caller's body as it is (same dialect on both sides). */
export function passthroughTo(call: CallerCall, engine: Engine): Passthrough | undefined {
  const passthrough = call.adapter.passthrough;
  return passthrough?.upstream === engine.dialect && !call.translated ? passthrough : undefined;
}

export function isPassthrough(call: CallerCall, engine: Engine): boolean {
  return passthroughTo(call, engine) !== undefined;
}

/** Parses the caller's body into the neutral form, once some target needs it; throws DialectRequestError (400). */
export function parseRequestFor(call: CallerCall, targets: readonly Target[]): void {
  if (call.request) return;
  if (targets.some((target) => !isPassthrough(call, target.engine))) call.request = call.adapter.parse(bodyOf(call));
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
  return call.adapter.parse(call.sent ? (JSON.parse(call.sent.toString('utf8')) as unknown) : bodyOf(call));
}

/**
 * The body one engine receives. Same dialect: the caller's body as its dialect's passthrough writes it (the
 * engine's model, limits). Otherwise the neutral form rendered for the engine's dialect, which carries only
 * fields that dialect knows.
 */
export function engineCall(call: CallerCall, engine: Engine, options: { defaultMaxTokens: number }): EngineCall {
  const upstream = upstreamAdapter(engine.dialect);
  const passthrough = passthroughTo(call, engine);
  if (passthrough) {
    const body = passthrough.request(bodyOf(call), {
      model: engine.model,
      outputLimit: call.outputLimit,
      stream: call.stream,
    });
    return { path: passthrough.path ?? upstream.path, body: Buffer.from(JSON.stringify(body)) };
  }
  const parsed = call.request!;
  const request =
    call.outputLimit !== undefined && parsed.maxOutputTokens === undefined
      ? { ...parsed, maxOutputTokens: call.outputLimit }
      : parsed;
  return {
    path: upstream.path,
    body: Buffer.from(JSON.stringify(upstream.renderRequest(request, engine.model, options))),
  };
}

/** The caller's output cap, whatever its dialect calls it. */
export function requestedMaxTokens(call: CallerCall): number | undefined {
  return call.adapter.requestedOutputLimit(bodyOf(call));
}

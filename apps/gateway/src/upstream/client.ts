import type { IncomingHttpHeaders } from 'node:http';
import type { ConnectionOptions } from 'node:tls';
import type { Agent, Dispatcher } from 'undici';
import type { EgressCaller, EgressPolicy } from '@sbc/egress';
import { injectContext, inSpan, SpanKind, tracingEnabled } from '@sbc/telemetry';
import { upstreamAdapter, UpstreamError } from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import { endpointUrl } from './endpoint-url';
import { createAdmission, createH2Agent, plainConnector, type QueueObserver } from './pools';

export interface UpstreamClientOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  idleTimeoutMs: number;
  /** HTTP/1.1 connections per origin; an HTTP/2 connection carries H2_STREAMS_PER_CONNECTION calls. */
  connectionsPerOrigin: number;
  /** Calls per origin that may wait for a connection; past it a call is refused at once (overloaded). */
  queueLimit: number;
  /** Extra TLS options for dialing upstreams (a private CA). */
  tls?: ConnectionOptions;
}

export interface UpstreamRequest {
  engine: Engine;
  path: '/chat/completions' | '/messages' | '/messages/count_tokens' | '/embeddings';
  body: string | Buffer;
  /** Caller headers worth passing on (Anthropic version and beta flags). */
  passHeaders?: Record<string, string>;
}

/**
 * Marks every request the edge sends upstream. The edge refuses a model call that carries it, so an endpoint
 * aimed back at this gateway (or at another edge of it) ends after one hop instead of fanning out.
 */
export const HOP_HEADER = 'x-sbc-hop';

/** The caller's headers an upstream should see: the Anthropic API version and beta flags it asked for. */
export function passHeadersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const pass: Record<string, string> = {};
  const version = headers['anthropic-version'];
  const beta = headers['anthropic-beta'];
  if (typeof version === 'string') pass['anthropic-version'] = version;
  if (typeof beta === 'string') pass['anthropic-beta'] = beta;
  return pass;
}

/**
 * The origin's connections and its wait queue are full: the call was not sent. Answered at once as an
 * overload (529 `overloaded_error` to messages callers, 503 to OpenAI's) with a short retry-after.
 */
function poolFull(): UpstreamError {
  const message = 'The gateway has too many calls waiting for this upstream; retry shortly.';
  return new UpstreamError('overloaded', { status: 503, message }, { retryAfterSeconds: 1 });
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * A transport failure as the upstream failure it is: `timeout` (504), or `unreachable` (502: no connection, a
 * reset, a refused dial, or one the egress policy refused).
 */
export function classifyTransportError(error: unknown): UpstreamError {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code))
    return new UpstreamError(
      'timeout',
      { status: 504, message: 'The upstream did not answer in time.' },
      { cause: error },
    );
  // The policy's reason names only the endpoint's host as its owner wrote it, and why it is not dialed.
  const message =
    code === 'EGRESS_DENIED'
      ? `The upstream was not dialed: ${(error as Error).message}.`
      : 'The upstream could not be reached.';
  return new UpstreamError('unreachable', { status: 502, message }, { cause: error });
}

/** The call was stopped because its caller hung up (or the edge drained before it was answered). */
export function isAbort(error: unknown): boolean {
  return error instanceof UpstreamError && error.reason === 'aborted';
}

/** Receives an upstream body chunk by chunk as it arrives, with nothing buffered in between. */
export interface BodySink {
  data(chunk: Buffer): void;
  end(): void;
  /** The body broke off (an UpstreamError: `unreachable` or `timeout`) or the call was aborted (`aborted`). */
  error(error: Error): void;
}

/**
 * One upstream request on undici's dispatch API, without the stream and promise layers of `request()`: the
 * model path's cheapest way through the pool. `head` settles with the status and headers; the body is then
 * read whole (`text`) or pushed to a sink (`attach`), with `pause`/`resume` passing a slow caller's
 * backpressure up to the upstream socket. Chunks that arrive before a reader is attached are held.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  status = 0;
  headers: IncomingHttpHeaders = {};
  /** Resolves at the response head; rejects with an UpstreamError (never `bad_reply`). */
  readonly head: Promise<UpstreamCall>;
  private settleHead?: { resolve: (call: UpstreamCall) => void; reject: (error: Error) => void };
  private controller?: Dispatcher.DispatchController;
  private abortedWith?: UpstreamError;
  private sink?: BodySink;
  private held: Buffer[] = [];
  private finished?: 'end' | Error;
  private progressed?: () => void;
  private observer?: BodySink;

  /** `ticket` is the call's admission slot: started when it reaches a connection, freed when it ends. */
  constructor(private readonly ticket?: { started(): void; finished(): void }) {
    this.head = new Promise((resolve, reject) => {
      this.settleHead = { resolve, reject };
    });
  }

  /** A call refused before it was sent: its head rejects with `error`. */
  static refused(error: Error): UpstreamCall {
    const call = new UpstreamCall();
    call.onResponseError(undefined as unknown as Dispatcher.DispatchController, error);
    return call;
  }

  /** Stops the request at once: before it is sent, while waiting for the head, or mid-body. */
  abort(): void {
    if (this.abortedWith || this.finished) return;
    this.abortedWith = UpstreamError.aborted();
    // Not yet on a socket: onRequestStart aborts it before anything is written.
    this.controller?.abort(this.abortedWith);
  }

  pause(): void {
    this.controller?.pause();
  }

  resume(): void {
    this.controller?.resume();
  }

  /**
   * The whole body parsed as JSON, for replies that are not streamed and for error bodies. A body that is not
   * a JSON object or array comes back as a sentence naming the status and content type: an endpoint aimed at
   * an internal page must not read that page back to the caller. Error messages are bounded.
   */
  async json(): Promise<unknown> {
    const text = await this.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed === null || typeof parsed !== 'object') {
      const type =
        String(this.headers['content-type'] ?? '')
          .split(';')[0]!
          .trim() || 'no content type';
      return `The upstream answered HTTP ${this.status} with a body that is not JSON (${type}).`;
    }
    return this.status >= 200 && this.status < 300 ? parsed : boundedError(parsed);
  }

  /** The whole body as text (count_tokens reads its small answer this way). */
  text(): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      this.attach({
        data: (chunk) => chunks.push(chunk),
        end: () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')),
        error: reject,
      });
    });
  }

  /**
   * Resolves once the body has produced its first chunk (or ended empty); rejects when it broke before
   * that. Until then a streamed call may still fall back to another engine.
   */
  firstData(): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.held.length > 0 || this.finished === 'end') resolve();
        else if (this.finished) reject(this.finished);
        else return false;
        this.progressed = undefined;
        return true;
      };
      if (!check()) this.progressed = check;
    });
  }

  /**
   * Lets `observer` see every body chunk as it arrives, beside whoever reads the body (the playground's capture
   * of what the upstream sent). Set before the head: nothing has arrived yet.
   */
  observe(observer: BodySink): void {
    this.observer = observer;
  }

  /** Hands the body to `sink`: what was held first, then each chunk as it arrives. */
  attach(sink: BodySink): void {
    this.sink = sink;
    const held = this.held;
    this.held = [];
    for (const chunk of held) sink.data(chunk);
    if (this.finished === 'end') sink.end();
    else if (this.finished) sink.error(this.finished);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.ticket?.started();
    if (this.abortedWith) controller.abort(this.abortedWith);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    this.settleHead?.resolve(this);
    this.settleHead = undefined;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.observer?.data(chunk);
    if (this.sink) this.sink.data(chunk);
    else {
      this.held.push(chunk);
      this.progressed?.();
    }
  }

  onResponseEnd(): void {
    this.finished = 'end';
    this.ticket?.finished();
    this.observer?.end();
    if (this.sink) this.sink.end();
    else this.progressed?.();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // An UpstreamError is the edge's own verdict (a refused call); anything else came from the transport.
    const failure = this.abortedWith ?? (error instanceof UpstreamError ? error : classifyTransportError(error));
    this.finished = failure;
    this.ticket?.finished();
    this.observer?.error(failure);
    if (this.settleHead) {
      this.settleHead.reject(failure);
      this.settleHead = undefined;
      return;
    }
    if (this.sink) this.sink.error(failure);
    else this.progressed?.();
  }
}

const MAX_ERROR_TEXT = 500;

/** An error body's messages cut to MAX_ERROR_TEXT: what an upstream says reaches the caller, but not without end. */
function boundedError(body: object): object {
  if (Array.isArray(body)) return body;
  const cut = (value: unknown) =>
    typeof value === 'string' && value.length > MAX_ERROR_TEXT ? `${value.slice(0, MAX_ERROR_TEXT)}…` : value;
  const out: Record<string, unknown> = { ...body };
  for (const field of ['message', 'detail', 'error']) if (typeof out[field] === 'string') out[field] = cut(out[field]);
  const error = out.error;
  if (error && typeof error === 'object' && !Array.isArray(error))
    out.error = { ...error, message: cut((error as { message?: unknown }).message) };
  return out;
}

/** The headers an upstream request is sent with (its credential among them). */
export function headersFor(request: UpstreamRequest): Record<string, string> {
  const { engine } = request;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: request.path === '/messages/count_tokens' ? 'application/json' : '*/*',
  };
  Object.assign(headers, upstreamAdapter(engine.dialect).headers(engine.apiKey, request.passHeaders), engine.headers);
  // The hop mark cannot be unset or respelled by an endpoint's own headers.
  for (const name of Object.keys(engine.headers)) if (name.toLowerCase() === HOP_HEADER) delete headers[name];
  headers[HOP_HEADER] = '1';
  return headers;
}

/**
 * One keep-alive pool per upstream origin, with connect, first-byte, body and idle timeouts. Every model call
 * goes through here; nothing is retried at this level (fallback between engines is the caller's decision,
 * and only before the first byte reached the caller).
 *
 * The operator's own engines (HOUSE_ENGINES, PROVIDER_ENGINES) are dialed as configured. A caller's endpoint
 * (`engine.dialAs`) is dialed through the egress policy for that caller, on the address it resolves to now,
 * so a name that passed when it was saved cannot resolve inward later.
 */
export function createUpstreamClient(options: UpstreamClientOptions, egress: EgressPolicy) {
  const poolOptions = {
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: options.idleTimeoutMs,
    connections: options.connectionsPerOrigin,
  };
  let observer: QueueObserver | undefined;
  const limits = { connectionsPerOrigin: options.connectionsPerOrigin, queueLimit: options.queueLimit };
  // The operator's pools and each egress caller's are apart, and so is their admission.
  const operatorAdmission = createAdmission(limits, () => observer);
  const agent = createH2Agent(
    poolOptions,
    plainConnector(options.connectTimeoutMs, options.tls),
    operatorAdmission.markH2,
  );
  const guarded = new Map<EgressCaller, { agent: Agent; admission: ReturnType<typeof createAdmission> }>();
  const poolFor = (engine: Engine) => {
    if (!engine.dialAs) return { agent, admission: operatorAdmission };
    let found = guarded.get(engine.dialAs);
    if (!found) {
      const admission = createAdmission(limits, () => observer);
      const connect = egress.connector(engine.dialAs, {
        ...(options.tls as object),
        timeout: options.connectTimeoutMs,
        allowH2: true,
      });
      found = { agent: createH2Agent(poolOptions, connect, admission.markH2), admission };
      guarded.set(engine.dialAs, found);
    }
    return found;
  };
  const urls = new Map<string, { origin: string; path: string }>();
  const targetOf = (request: UpstreamRequest) => {
    const cacheKey = `${request.engine.baseUrl} ${request.path}`;
    let target = urls.get(cacheKey);
    if (!target) {
      target = endpointUrl(request.engine.baseUrl, request.path);
      urls.set(cacheKey, target);
    }
    return target;
  };

  return {
    /** Starts the request; await `head` on the returned call, then read its body. */
    send(request: UpstreamRequest): UpstreamCall {
      const { origin, path } = targetOf(request);
      const pool = poolFor(request.engine);
      const ticket = pool.admission.admit(origin);
      if (!ticket) return UpstreamCall.refused(poolFull());
      const call = new UpstreamCall(ticket);
      // Marked idempotent so HTTP/2 multiplexes it; nothing here retries a call, so it is never sent twice.
      const dispatch = (headers: Record<string, string>) =>
        pool.agent.dispatch({ origin, path, method: 'POST', headers, body: request.body, idempotent: true }, call);
      if (!tracingEnabled()) {
        dispatch(headersFor(request));
        return call;
      }
      // The span covers the call up to the upstream's response headers (its first byte); the body streams on.
      // Whoever awaits `head` sees its failure; the span only records it.
      inSpan(`POST ${path}`, SpanKind.CLIENT, undefined, async (span) => {
        span.setAttributes({
          'server.address': origin,
          'url.path': path,
          'sbc.upstream.dialect': request.engine.dialect,
        });
        dispatch(injectContext(headersFor(request)));
        await call.head;
        span.setAttribute('http.response.status_code', call.status);
      }).catch(() => undefined);
      return call;
    },
    /** Calls waiting for a connection and in flight, over every upstream. */
    stats(): { queued: number; inFlight: number } {
      const totals = operatorAdmission.stats();
      for (const { admission } of guarded.values()) {
        const more = admission.stats();
        totals.queued += more.queued;
        totals.inFlight += more.inFlight;
      }
      return totals;
    },
    /** Where queue waits and overload refusals are reported (the edge's metrics). */
    observe(next: QueueObserver): void {
      observer = next;
    },
    close: async () => {
      await Promise.all([agent, ...[...guarded.values()].map((pool) => pool.agent)].map((pool) => pool.close()));
    },
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;

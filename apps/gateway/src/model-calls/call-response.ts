import type { ServerResponse } from 'node:http';
import { ApiError, toEnvelope } from '@sbc/errors';
import type { CallerDialect, UpstreamFailure } from '@sbc/dialects';
import { closeIfUnread } from '../http/json-body';

/**
 * Writing a model call's answer: headers every gateway response carries (request id under both SDKs' names,
 * rate-limit state) and refusals in the dialect that was called — except a missing scope, which answers in
 * the shared Error envelope (CONTRACTS).
 */
export class CallResponse {
  /**
   * This response's headers, written once: the answer adds its own to them in place. A spread copy with more keys
   * (`{ ...this.headers, 'content-type': … }`) would get a hidden class of its own on every call on Node 20
   * (docs/benchmarks.md, "Hidden classes made per call").
   */
  private readonly headers: Record<string, string>;

  constructor(
    readonly res: ServerResponse,
    readonly adapter: CallerDialect,
    readonly requestId: string,
    private readonly baseUrl: string,
  ) {
    this.headers = adapter.requestIdHeaders(requestId);
  }

  addHeaders(headers: Record<string, string>): void {
    Object.assign(this.headers, headers);
  }

  get started(): boolean {
    return this.res.headersSent;
  }

  json(status: number, body: unknown, extraHeaders?: Record<string, string>): void {
    // A caller that hung up gets nothing.
    if (this.res.destroyed) return;
    closeIfUnread(this.res);
    const payload = JSON.stringify(body);
    // Added to this response's own headers rather than to a spread copy of them: see `headers`.
    const headers = this.headers;
    if (extraHeaders) Object.assign(headers, extraHeaders);
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
    this.res.writeHead(status, headers);
    this.res.end(payload);
  }

  /**
   * Opens the event stream: no compression, no proxy buffering. The headers go out when `flushHeaders` says
   * so (the stream relay: in one write with the first frames). The connection header is Node's (keep-alive,
   * or close while the edge drains).
   */
  openStream(): void {
    const headers = this.headers;
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache, no-transform';
    headers['x-accel-buffering'] = 'no';
    this.res.writeHead(200, headers);
  }

  /** Writes the stream's headers now (a no-op once they went out). */
  flushHeaders(): void {
    this.res.flushHeaders();
  }

  /** A refusal raised by the edge itself (ApiError) before anything was written. */
  refuse(error: ApiError): void {
    if (error.code === 'insufficient_scope') {
      this.json(error.status, toEnvelope(error, this.requestId, this.baseUrl), error.headers);
      return;
    }
    // OpenAI's SDKs and tools look for `model_not_found` on an unknown model.
    const code = error.code === 'not_found' && error.param === 'model' ? 'model_not_found' : error.code;
    this.fail({ status: error.status, message: error.callerMessage, code, param: error.param ?? null }, error.headers, {
      ...error.extra,
      ...(error.issues ? { issues: error.issues } : {}),
    });
  }

  /** An upstream's or the edge's failure in the called dialect. */
  fail(failure: UpstreamFailure, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}): void {
    const body = this.adapter.errorBody(failure, this.requestId);
    const inner = body.error;
    if (Object.keys(extra).length > 0 && inner && typeof inner === 'object') Object.assign(inner, extra);
    this.json(failure.status, body, headers);
  }
}

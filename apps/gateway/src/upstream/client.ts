import type { IncomingHttpHeaders } from 'node:http';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { injectContext, inSpan, SpanKind, tracingEnabled } from '@sbc/telemetry';
import type { Engine } from '../routing/engines';
import { endpointUrl } from './endpoint-url';

export interface UpstreamClientOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  idleTimeoutMs: number;
  connectionsPerOrigin: number;
}

export interface UpstreamRequest {
  engine: Engine;
  path: '/chat/completions' | '/messages' | '/messages/count_tokens';
  body: string;
  /** Aborted when the caller hangs up: the upstream request stops at once. */
  signal: AbortSignal;
  /** Caller headers worth passing on (Anthropic version and beta flags). */
  passHeaders?: Record<string, string>;
}

/** The caller's headers an upstream should see: the Anthropic API version and beta flags it asked for. */
export function passHeadersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const pass: Record<string, string> = {};
  const version = headers['anthropic-version'];
  const beta = headers['anthropic-beta'];
  if (typeof version === 'string') pass['anthropic-version'] = version;
  if (typeof beta === 'string') pass['anthropic-beta'] = beta;
  return pass;
}

export interface UpstreamReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

/** Why an upstream could not be used at all (no HTTP status came back). */
export class UpstreamUnavailableError extends Error {
  constructor(
    readonly status: 502 | 504,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'UpstreamUnavailableError';
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Maps a transport failure to 504 (timed out) or 502 (unreachable, reset, refused). */
export function classifyTransportError(error: unknown): UpstreamUnavailableError {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return new UpstreamUnavailableError(504, 'The upstream did not answer in time.', { cause: error });
  return new UpstreamUnavailableError(502, 'The upstream could not be reached.', { cause: error });
}

export function isAbort(error: unknown): boolean {
  return error instanceof undiciErrors.RequestAbortedError || (error as { name?: unknown } | null)?.name === 'AbortError';
}

function headersFor(request: UpstreamRequest): Record<string, string> {
  const { engine } = request;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: request.path === '/messages/count_tokens' ? 'application/json' : '*/*' };
  if (engine.dialect === 'anthropic') {
    headers['anthropic-version'] = request.passHeaders?.['anthropic-version'] ?? '2023-06-01';
    const beta = request.passHeaders?.['anthropic-beta'];
    if (beta) headers['anthropic-beta'] = beta;
    if (engine.apiKey) headers['x-api-key'] = engine.apiKey;
  } else if (engine.apiKey) {
    headers.authorization = `Bearer ${engine.apiKey}`;
  }
  return Object.assign(headers, engine.headers);
}

/**
 * One keep-alive pool per upstream origin, with connect, first-byte, body and idle timeouts. Every model call
 * goes through here; nothing is retried at this level (fallback between engines is the caller's decision,
 * and only before the first byte reached the caller).
 */
export function createUpstreamClient(options: UpstreamClientOptions) {
  const agent = new Agent({
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: options.idleTimeoutMs,
    keepAliveMaxTimeout: options.idleTimeoutMs,
    connections: options.connectionsPerOrigin,
  });
  const urls = new Map<string, { origin: string; path: string }>();

  return {
    async send(request: UpstreamRequest): Promise<UpstreamReply> {
      const cacheKey = `${request.engine.baseUrl} ${request.path}`;
      let target = urls.get(cacheKey);
      if (!target) {
        target = endpointUrl(request.engine.baseUrl, request.path);
        urls.set(cacheKey, target);
      }
      const dispatch = async (headers: Record<string, string>): Promise<UpstreamReply> => {
        try {
          const reply = await agent.request({ origin: target.origin, path: target.path, method: 'POST', headers, body: request.body, signal: request.signal });
          return { status: reply.statusCode, headers: reply.headers, body: reply.body };
        } catch (error) {
          if (isAbort(error)) throw error;
          throw classifyTransportError(error);
        }
      };
      if (!tracingEnabled()) return dispatch(headersFor(request));
      // The span covers the call up to the upstream's response headers (its first byte); the body streams on.
      const { origin, path } = target;
      return inSpan(`POST ${path}`, SpanKind.CLIENT, undefined, async (span) => {
        span.setAttributes({ 'server.address': origin, 'url.path': path, 'sbc.upstream.dialect': request.engine.dialect });
        const reply = await dispatch(injectContext(headersFor(request)));
        span.setAttribute('http.response.status_code', reply.status);
        return reply;
      });
    },
    close: () => agent.close(),
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;

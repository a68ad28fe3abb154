import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { CallerDialect } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import { extractContext, SpanKind, SpanStatusCode, startSpan, tracingEnabled, withContext } from '@sbc/telemetry';
import { MODEL_CALL_ROUTES } from './model-calls/handle-call';
import { MESSAGES } from './model-calls/handle-count-tokens';
import { routeTemplateOf, type EdgeMetrics } from './observability/edge-metrics';
import { refuseReturningCall } from './upstream/hop';

export interface EdgeRouterDeps {
  baseUrl: string;
  logger: Logger;
  metrics: EdgeMetrics;
  /** Published apps, by Host header; true when it answered. */
  appsHost: { handle(req: IncomingMessage, res: ServerResponse): boolean };
  handleModelCall(req: IncomingMessage, res: ServerResponse, adapter: CallerDialect): Promise<void>;
  handleCountTokens(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Prometheus scrapes on the main port, for loopback callers; absent when metrics have a port of their own. */
  scrape?: RequestListener;
  /** The REST surface (Express). */
  rest: RequestListener;
}

function isLoopback(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}

/** The path of a request URL, without its query (`?beta=true` on Messages routes is routed on the path). */
function pathOf(url: string | undefined): string {
  if (!url) return '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/**
 * The edge's one request listener: published apps by Host; model calls and count_tokens on a lean path of
 * their own (no Express); metrics scrapes from this machine; everything else to the REST surface. With
 * tracing on, each request is a server span continuing the caller's trace.
 */
export function createEdgeRouter(deps: EdgeRouterDeps): RequestListener {
  const { metrics } = deps;
  const answer: RequestListener = (req, res) => {
    if (deps.appsHost.handle(req, res)) {
      metrics.track(req, res, undefined, 'apps-host');
      return;
    }
    if (req.method === 'POST') {
      const path = pathOf(req.url);
      const adapter = MODEL_CALL_ROUTES.get(path);
      if (adapter) {
        metrics.track(req, res, adapter.name, path);
        if (refuseReturningCall(req, res, adapter, deps.baseUrl)) return;
        deps
          .handleModelCall(req, res, adapter)
          .catch((err: unknown) => deps.logger.error({ err }, 'model call handler failed'));
        return;
      }
      if (path === '/v1/messages/count_tokens') {
        metrics.track(req, res, 'messages', path);
        if (refuseReturningCall(req, res, MESSAGES, deps.baseUrl)) return;
        deps
          .handleCountTokens(req, res)
          .catch((err: unknown) => deps.logger.error({ err }, 'count_tokens handler failed'));
        return;
      }
    }
    if (deps.scrape && req.url === '/metrics' && isLoopback(req.socket.remoteAddress)) {
      deps.scrape(req, res);
      return;
    }
    metrics.track(req, res, undefined);
    deps.rest(req, res);
  };
  return (req, res) => {
    if (!tracingEnabled()) return answer(req, res);
    const { span, context } = startSpan(
      `${req.method} ${pathOf(req.url)}`,
      SpanKind.SERVER,
      extractContext(req.headers),
    );
    res.once('close', () => {
      const routed = routeTemplateOf(req);
      if (routed) span.updateName(`${req.method} ${routed}`);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    withContext(context, () => answer(req, res));
  };
}

import { healthRoutes } from '@sbc/http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { requireApiKey } from './routes/auth';
import type { RouteDeps } from './routes/call';
import { faultRoutes } from './routes/faults';
import { chatCompletionsRoute } from './routes/chat-completions';
import { embeddingsRoute } from './routes/embeddings';
import { countTokensRoute, messagesRoute } from './routes/messages';
import { getModelRoute, listModelsRoute } from './routes/models';
import { responsesInputTokensRoute, responsesRoute } from './routes/responses';
import { SimError, requestDialect, sendError } from './wire/errors';
import { frontedPrefix, refuseUnknownBetas } from './wire/fronted-betas';
import { newId } from './wire/ids';
import type { SimResponse } from './wire/response';

export type SimDialect = 'openai' | 'anthropic';

export interface AppDeps extends RouteDeps {
  apiKey: string | undefined;
  /** The dialects served; with one only, the model list ignores `anthropic-version` and the other's routes 404. */
  dialects: readonly SimDialect[];
  /** Serve `/__faults` (to loopback callers only). */
  faultControl: boolean;
}

/** Labels an answer as simulated and gives it a request id under both vendors' header names. */
export function labelSimulated(res: Pick<SimResponse, 'setHeader'>): void {
  const requestId = newId('req_');
  res.setHeader('x-sim-upstream', '1');
  res.setHeader('x-request-id', requestId);
  res.setHeader('request-id', requestId);
}

const simHeaders: RequestHandler = (_req, res, next) => {
  labelSimulated(res);
  next();
};

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(simHeaders);
  app.use(frontedPrefix);
  app.use((req, res, next) => {
    const startedAt = performance.now();
    res.once('close', () => {
      const ms = Math.round(performance.now() - startedAt);
      deps.logger.debug(
        { requestId: res.getHeader('request-id'), route: req.path, status: res.statusCode, ms },
        'request',
      );
    });
    next();
  });
  app.use(healthRoutes(() => true));
  if (deps.faultControl) app.use('/__faults', faultRoutes(deps.faults));
  app.use('/v1', requireApiKey(deps.apiKey));
  app.use('/v1/messages', refuseUnknownBetas);
  app.use(express.json({ limit: '32mb' }));

  const only = deps.dialects.length === 1 ? deps.dialects[0] : undefined;
  app.get('/v1/models', listModelsRoute(deps.models, only));
  app.get('/v1/models/*id', getModelRoute(only));
  if (deps.dialects.includes('openai')) {
    app.post('/v1/chat/completions', chatCompletionsRoute(deps));
    app.post('/v1/responses', responsesRoute(deps));
    app.post('/v1/responses/input_tokens', responsesInputTokensRoute());
    app.post('/v1/embeddings', embeddingsRoute(deps));
  }
  if (deps.dialects.includes('anthropic')) {
    app.post('/v1/messages', messagesRoute(deps));
    app.post('/v1/messages/count_tokens', countTokensRoute());
  }

  app.use((req, res) => {
    sendError(
      res,
      requestDialect(req),
      new SimError(404, `sim-upstream has no route ${req.method} ${req.path}`, null, 'unknown_url'),
    );
  });
  app.use(renderErrors(deps));
  return app;
}

function renderErrors(deps: AppDeps): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const dialect = requestDialect(req);
    if (error instanceof SimError) {
      sendError(res, dialect, error);
      return;
    }
    const bodyError = error as { type?: unknown; status?: unknown };
    if (bodyError.type === 'entity.parse.failed') {
      const message =
        dialect === 'anthropic'
          ? 'There was an issue with your request body: invalid JSON'
          : 'We could not parse the JSON body of your request.';
      sendError(res, dialect, new SimError(400, message));
      return;
    }
    if (typeof bodyError.status === 'number' && bodyError.status >= 400 && bodyError.status < 500) {
      sendError(res, dialect, new SimError(bodyError.status, String((error as Error).message ?? 'bad request')));
      return;
    }
    deps.logger.error({ err: error, requestId: res.getHeader('request-id'), route: req.path }, 'unhandled error');
    sendError(res, dialect, new SimError(500, 'sim-upstream failed unexpectedly.'));
  };
}

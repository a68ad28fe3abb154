import { Router, type Response } from 'express';
import { buildOpenApiDocument, ROUTES } from '@sbc/api';
import { renderApiReference, type OpenApiDocument } from './developers/api-reference';
import { renderGuidePage } from './developers/guide-page';
import { loadQuickStarts, type QuickStart } from './developers/quickstarts';
import { DEVELOPERS_CSS } from './developers/style';
import { CONSOLE_CSP } from './console';

function pageHeaders(res: Response): void {
  res.setHeader('content-security-policy', CONSOLE_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'same-origin');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('cache-control', 'no-cache');
}

/**
 * The developer docs: /developers (quick starts, error shapes, one anchor per error code: every `doc_url`
 * lands here) and /developers/api (the API reference). Both are plain HTML rendered once from the
 * error registry, the quick-start files the tests run and the same OpenAPI document /docs/openapi.json
 * serves, so they cannot drift from the service; no script runs, and they share the console's CSP.
 */
export function developerRoutes(deps: { baseUrl: string; quickStarts?: QuickStart[] }): Router {
  // Rendered on first request, not at start: the edge's start time stays what it was.
  let guide: string | undefined;
  let reference: string | undefined;
  const router = Router();
  router.get('/developers', (_req, res) => {
    guide ??= renderGuidePage({ baseUrl: deps.baseUrl, quickStarts: deps.quickStarts ?? loadQuickStarts() });
    pageHeaders(res);
    res.type('html').send(guide);
  });
  router.get('/developers/api', (_req, res) => {
    reference ??= renderApiReference(
      buildOpenApiDocument(ROUTES, { baseUrl: deps.baseUrl }) as unknown as OpenApiDocument,
    );
    pageHeaders(res);
    res.type('html').send(reference);
  });
  router.get('/developers/developers.css', (_req, res) => {
    pageHeaders(res);
    res.type('css').send(DEVELOPERS_CSS);
  });
  return router;
}

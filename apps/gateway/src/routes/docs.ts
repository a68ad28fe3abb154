import { Router } from 'express';
import { buildOpenApiDocument, ROUTES } from '@sbc/api';

/** `GET /docs/openapi.json`: the description of every route, built once from the schemas that validate them. */
export function docsRoutes(deps: { baseUrl: string }): Router {
  const document = JSON.stringify(buildOpenApiDocument(ROUTES, { baseUrl: deps.baseUrl }));
  const router = Router();
  router.get('/docs/openapi.json', (_req, res) => {
    res.type('application/json').send(document);
  });
  return router;
}

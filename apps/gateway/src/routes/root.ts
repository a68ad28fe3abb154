import { Router } from 'express';

/**
 * `HEAD /`: 200 with no body, without a credential and whatever the Accept header: Claude Code sends it first, to
 * check that its base URL answers. `GET /`: a browser (it accepts text/html) goes to the console; an API client
 * gets a small index of where things are. Content negotiation, so `Vary: Accept`.
 */
export function rootRoutes(deps: { baseUrl: string }): Router {
  const base = deps.baseUrl.replace(/\/+$/, '');
  const index = JSON.stringify({
    object: 'index',
    docs: `${base}/developers`,
    api_reference: `${base}/developers/api`,
    openapi: `${base}/docs/openapi.json`,
    console: `${base}/console/`,
    health: `${base}/healthz`,
    ready: `${base}/readyz`,
    models: `${base}/v1/models`,
  });
  const router = Router();
  router.head('/', (_req, res) => {
    res.status(200).end();
  });
  router.get('/', (req, res) => {
    res.setHeader('vary', 'Accept');
    if (req.accepts(['application/json', 'text/html']) === 'text/html') {
      res.redirect(302, '/console/');
      return;
    }
    res.type('application/json').send(index);
  });
  return router;
}

import { Router } from 'express';
import { principalOf, type Authorize } from '../auth/authorize';
import { jsonBody } from '../http/json-body';
import type { McpSessions } from '../mcp/mcp-sessions';

/**
 * `/mcp` and `/mcp/{slug}`: the gateway as an MCP server (Streamable HTTP: POST, GET and DELETE). The credential and
 * `gateway:invoke` come first (401 or 403 in the shared envelope, before any session is made), each request takes
 * one from the caller's request bucket as every keyed route does, and only then is the body read.
 */
export function mcpRoutes(deps: { authorize: Authorize; mcp: McpSessions }): Router {
  const router = Router();
  router.all(['/mcp', '/mcp/:slug'], deps.authorize(['gateway:invoke']), jsonBody, async (req, res) => {
    const slug = typeof req.params.slug === 'string' ? req.params.slug : undefined;
    await deps.mcp.handle(req, res, slug, req.body, { principal: principalOf(req), requestId: req.requestId });
  });
  return router;
}

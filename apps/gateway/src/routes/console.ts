import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express, { Router, type Response } from 'express';
import { ApiError } from '@sbc/errors';

/**
 * The console's pages allow only their own scripts, styles and API calls: no inline script, no other origin,
 * no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where the built console is: beside the bundle in an image (`./console`), next to it in dist
 * (dist/apps/console), or the workspace's dist when the edge runs from source (tests).
 */
function findConsoleDir(
  candidates = [
    path.join(__dirname, 'console'),
    path.join(__dirname, '..', 'console'),
    path.resolve('dist', 'apps', 'console'),
  ],
): string | undefined {
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html')));
}

function securityHeaders(res: Response): void {
  res.setHeader('content-security-policy', CONSOLE_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'same-origin');
  res.setHeader('x-frame-options', 'DENY');
}

const escapeAttribute = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The page carries the edge's BASE_URL in `<meta name="sbc-base-url">` (the console's copy-for-an-agent snippets
 * name it; a page script may not be inline, and the browser's own origin may be another host name for the same edge).
 */
function withBaseUrl(html: string, baseUrl: string | undefined): string {
  if (!baseUrl) return html;
  const meta = `<meta name="sbc-base-url" content="${escapeAttribute(baseUrl.replace(/\/+$/, ''))}">`;
  return html.includes('</head>') ? html.replace('</head>', `${meta}\n</head>`) : `${meta}\n${html}`;
}

/**
 * The console, served at /console/: hashed assets for a year (immutable, their names change with their
 * content), the app's index.html for every other /console/ path (the app routes in the browser), always
 * revalidated so a new build is picked up at once. /device, the pairing flow's verification URI, leads to the
 * console's activation page with the query (user_code) kept.
 */
export function consoleRoutes(deps: { consoleDir?: string; baseUrl?: string } = {}): Router {
  const router = Router();
  const dir = deps.consoleDir ?? findConsoleDir();
  const index = dir ? withBaseUrl(readFileSync(path.join(dir, 'index.html'), 'utf8'), deps.baseUrl) : undefined;

  router.get('/device', (req, res) => {
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    res.redirect(302, `/console/device${query}`);
  });
  // Routes ignore a trailing slash, so only the bare path (relative asset URLs would break under it) moves.
  router.get('/console', (req, res, next) => (req.path === '/console' ? res.redirect(301, '/console/') : next()));

  if (dir) {
    router.use(
      '/console/assets',
      (_req, res, next) => {
        securityHeaders(res);
        next();
      },
      express.static(path.join(dir, 'assets'), {
        index: false,
        immutable: true,
        maxAge: 365 * 86_400_000,
        etag: false,
        redirect: false,
      }),
      // A missing asset is a 404, never the app's page (a browser would run HTML as a script or style).
      (_req, _res, next) => next(new ApiError('not_found', 'No such console asset.')),
    );
  }
  router.get(['/console/', '/console/{*page}'], (_req, res, next) => {
    if (!index) {
      next(new ApiError('service_unavailable', 'The console is not built: run `npx nx run console:build`.'));
      return;
    }
    securityHeaders(res);
    res.setHeader('cache-control', 'no-cache');
    res.type('html').send(index);
  });
  return router;
}

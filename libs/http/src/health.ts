import { Router } from 'express';

/**
 * `/healthz` answers while the process can serve at all (liveness); `/readyz` answers 200 only while `ready()`
 * says the app should take traffic, and turns 503 first when it drains. `detail` adds what an operator should
 * know without taking the app out of traffic (a degraded dependency) to the readiness body.
 */
export function healthRoutes(
  ready: () => boolean | Promise<boolean>,
  detail: () => Record<string, unknown> = () => ({}),
): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    let ok = false;
    try {
      ok = await ready();
    } catch {
      ok = false;
    }
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'not_ready', ...detail() });
  });
  return router;
}

import express, { Router, type RequestHandler } from 'express';
import type { FaultInjector } from '../faults/fault-injector';
import { parseFaultPlan } from '../faults/fault-plan';
import { SimError, sendError } from '../wire/errors';

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/**
 * Only a caller on this machine may drive faults: the route set exists only with SIM_FAULTS on, and even then
 * a remote caller meets the simulator's ordinary 404.
 */
const loopbackOnly: RequestHandler = (req, _res, next) => {
  if (isLoopback(req.socket.remoteAddress)) next();
  else next('router');
};

/**
 * `/__faults`: POST sets a plan (and starts the counts afresh), DELETE ends it, GET reports; each answers with
 * the report (plan, counts, calls received while a plan was active).
 */
export function faultRoutes(faults: FaultInjector): Router {
  const router = Router();
  router.use(loopbackOnly);
  router.get('/', (_req, res) => {
    res.json(faults.report());
  });
  router.post('/', express.json({ limit: '64kb' }), (req, res) => {
    const check = parseFaultPlan(req.body);
    if (!check.ok) {
      sendError(res, 'openai', new SimError(400, check.message, check.param, 'invalid_fault_plan'));
      return;
    }
    faults.set(check.plan);
    res.json(faults.report());
  });
  router.delete('/', (_req, res) => {
    faults.clear();
    res.json(faults.report());
  });
  return router;
}

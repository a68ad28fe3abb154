import type { Request, Response } from 'express';

/** Sends a JSON resource with the request id echoed in the body, as every account-surface body carries it. */
export function sendResource(req: Request, res: Response, body: Record<string, unknown>, status = 200): void {
  res.status(status).json({ ...body, request_id: req.requestId });
}

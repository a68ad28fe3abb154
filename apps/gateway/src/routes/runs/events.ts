import type { Request, Response } from 'express';
import { ApiError } from '@sbc/errors';
import type { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { renderEvent } from './render';

const SETTLING = new Set(['run.succeeded', 'run.failed', 'run.cancelled']);
// One gRPC stream lives at most this long; the edge then resumes from the last event, unseen by the caller.
const STREAM_DEADLINE_MS = 10 * 60_000;
// Consecutive failed (re)connections to the runs service before the caller's stream is ended; the caller
// then resumes with Last-Event-ID.
const MAX_RECONNECTS = 4;

/** Where to start: `?after=N` wins over `Last-Event-ID`; a malformed Last-Event-ID is 400. */
export function resumeAfter(queryAfter: number | undefined, lastEventId: string | string[] | undefined): number {
  if (queryAfter !== undefined) return queryAfter;
  if (lastEventId === undefined) return 0;
  if (typeof lastEventId === 'string' && /^\d{1,9}$/.test(lastEventId.trim())) return Number(lastEventId.trim());
  throw ApiError.invalid([
    {
      path: 'last-event-id',
      code: 'invalid_value',
      message: 'Last-Event-ID must be the sequence number of an event (a whole number).',
    },
  ]);
}

/** JSON page for `Accept: application/json` (without text/event-stream); everything else streams. */
export function wantsJsonPage(req: Request): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/event-stream');
}

/**
 * Relays a run's events as server-sent events until the settling event, the caller hanging up, or the edge
 * draining. The runs service streams stored events then live ones without gap or repeat; when its stream
 * breaks off (deadline, a replica stopping) the edge reconnects from the last sequence number it wrote, so
 * the caller sees one unbroken stream.
 */
export async function relayRunEvents(options: {
  runs: RpcClientOf<typeof RunsService>;
  userId: string;
  runId: string;
  after: number;
  requestId: string;
  req: Request;
  res: Response;
  draining: AbortSignal;
  heartbeatMs: number;
}): Promise<void> {
  const { res } = options;
  const stop = new AbortController();
  const end = () => stop.abort();
  res.on('close', end);
  options.draining.addEventListener('abort', end, { once: true });
  if (options.req.destroyed || options.draining.aborted) end();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), options.heartbeatMs);
  let last = options.after;
  let settled = false;
  let failures = 0;
  try {
    while (!settled && !stop.signal.aborted) {
      let relayed = false;
      try {
        const stream = options.runs.streamRunEvents(
          { userId: options.userId, runId: options.runId, after: last },
          { requestId: options.requestId, signal: stop.signal, deadlineMs: STREAM_DEADLINE_MS },
        );
        for await (const { event } of stream) {
          if (!event || event.seq <= last) continue;
          res.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(renderEvent(event))}\n\n`);
          last = event.seq;
          relayed = true;
          failures = 0;
          if (SETTLING.has(event.type)) {
            settled = true;
            break;
          }
        }
        // A stream that ended on its own without a single event is a replica going away: back off as below.
        if (relayed || settled) continue;
      } catch (error) {
        if (stop.signal.aborted) break;
        if (error instanceof ApiError && error.status < 500) break;
      }
      failures += 1;
      if (failures > MAX_RECONNECTS) break;
      await new Promise((resolve) => setTimeout(resolve, 250 * failures));
    }
  } finally {
    clearInterval(heartbeat);
    res.off('close', end);
    options.draining.removeEventListener('abort', end);
    res.end();
  }
}

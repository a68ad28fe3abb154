import type { Logger } from '@sbc/logging';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import { addBatchKey, claimLine, finalizeBatches, retryLine, settleLine, type ClaimedLine } from '../store/batches';
import type { InvokeKeys } from './invoke-keys';

export interface BatchRunnerDeps {
  db: RunsDb;
  logger: Logger;
  keys: InvokeKeys;
  /** The edge the lines are called through; read per call (embedded learns it once the edge listens). */
  gatewayUrl: () => string;
  /** Lines this process runs at once: the batch lane's whole share, whatever the number of batches. */
  concurrency: number;
  pollMs: number;
  /** A claimed line is someone else's to retry after this; a line's call is cut well before it. */
  leaseMs: number;
  /** Tries of one line before its last answer is its result. */
  maxAttempts: number;
}

export interface BatchRunner {
  start(): void;
  /** Looks for lines now (a batch was just queued or cancelled in this process). */
  wake(): void;
  /** Stops claiming and cuts the calls in hand; their lines are claimed again once their leases run out. */
  stop(): Promise<void>;
}

/** Statuses worth another try later: the edge's limits and an upstream's trouble, as the routing policy retries. */
const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504, 529]);
const MAX_RETRY_DELAY_MS = 60_000;

/**
 * The edge's mark on a batch key's 429 when the line yielded to its creating key's other calls (its share of the
 * key's limits is in use: docs/batches.md "Pacing"). The edge sets it on its own refusals of a batch key only.
 */
const YIELD_HEADER = 'x-sbc-batch-yield';

/** `yielded`: the line waited its turn and is put back without counting the try (BATCHES_MAX_ATTEMPTS). */
type LineOutcome =
  { kind: 'settled'; ok: boolean; result: string } | { kind: 'retry'; delayMs: number; yielded?: boolean };

function retryDelay(attempt: number, retryAfter: string | null): number {
  const told = retryAfter === null ? NaN : Number(retryAfter) * 1000;
  if (Number.isFinite(told) && told >= 0) return Math.min(told, MAX_RETRY_DELAY_MS);
  return Math.min(1000 * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
}

/**
 * The batch lane: `concurrency` loops that each claim a line, call it through the edge as its creator would
 * (a key minted within the creator's bounds, so scopes, models, caps, budgets and routing apply and the call
 * is billed as any), and settle it; when nothing is left to claim they end the batches that are done. The lane
 * is paced by its size and by the edge, which admits a batch's lines within a share of the creating key's limits:
 * a line that yielded to the key's other calls, a 429 or an upstream failure is put back for later (`retry-after`
 * honoured), never into a tight loop, and only the last two count as tries.
 */
export function createBatchRunner(deps: BatchRunnerDeps): BatchRunner {
  const { db, logger } = deps;
  const keys = new Map<string, Promise<string>>();
  const inFlight = new AbortController();
  const loops: Promise<void>[] = [];
  let stopping = false;
  let wakeIdle: (() => void)[] = [];

  function idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, deps.pollMs);
      function done() {
        clearTimeout(timer);
        wakeIdle = wakeIdle.filter((waiting) => waiting !== done);
        resolve();
      }
      wakeIdle.push(done);
    });
  }

  /** This process's key for a batch, minted once and recorded on the batch so its end revokes it. */
  function keyFor(line: ClaimedLine): Promise<string> {
    let key = keys.get(line.batchId);
    if (!key) {
      key = deps.keys.mintForBatch(line.caller, line.batchId).then(async (minted) => {
        await addBatchKey(db, line.batchId, minted.id);
        return minted.secret;
      });
      key.catch(() => keys.delete(line.batchId));
      keys.set(line.batchId, key);
    }
    return key;
  }

  async function call(line: ClaimedLine): Promise<LineOutcome> {
    const body = JSON.parse(line.body) as Record<string, unknown>;
    // A batch line answers whole: a stream asked for in the line would have no one to read it.
    delete body.stream;
    delete body.stream_options;
    const key = await keyFor(line);
    const signal = AbortSignal.any([inFlight.signal, AbortSignal.timeout(Math.floor(deps.leaseMs * 0.8))]);
    let response: Response;
    try {
      // The line's id is the call's request id and, since the key is this batch's, the usage event id of its
      // answered call: a line called again after a crash between its answer and its settle is billed once.
      response = await fetch(`${deps.gatewayUrl().replace(/\/+$/, '')}${line.endpoint}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': line.id },
        body: JSON.stringify(body),
        signal,
      });
    } catch {
      if (inFlight.signal.aborted) throw new Error('stopping');
      return unreachable(line);
    }
    const text = await response.text().catch(() => '');
    if (response.status === 429 && response.headers.get(YIELD_HEADER) === 'share')
      return { kind: 'retry', delayMs: retryDelay(1, response.headers.get('retry-after')), yielded: true };
    if (RETRYABLE.has(response.status) && line.attempts < deps.maxAttempts)
      return { kind: 'retry', delayMs: retryDelay(line.attempts, response.headers.get('retry-after')) };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error: { message: `The gateway answered HTTP ${response.status} without a JSON body.` } };
    }
    const result = {
      id: line.id,
      custom_id: line.customId,
      response: {
        status_code: response.status,
        request_id: response.headers.get('x-request-id') ?? line.id,
        body: parsed,
      },
      error: null,
    };
    return { kind: 'settled', ok: response.ok, result: JSON.stringify(result) };
  }

  function unreachable(line: ClaimedLine): LineOutcome {
    if (line.attempts < deps.maxAttempts) return { kind: 'retry', delayMs: retryDelay(line.attempts, null) };
    const error = { code: 'gateway_unreachable', message: 'The gateway could not be reached for this request.' };
    return {
      kind: 'settled',
      ok: false,
      result: JSON.stringify({ id: line.id, custom_id: line.customId, response: null, error }),
    };
  }

  async function finalize(): Promise<void> {
    for (const batch of await finalizeBatches(db, new Date())) {
      for (const keyId of batch.keyIds)
        await deps.keys.revoke(batch.caller.user_id, keyId).catch((err: unknown) => {
          logger.warn({ err }, 'revoking a finished batch key failed');
        });
    }
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      let line: ClaimedLine | undefined;
      try {
        line = await claimLine(db, deps.leaseMs);
        if (!line) {
          await finalize();
          await idle();
          continue;
        }
        const outcome = await call(line);
        if (outcome.kind === 'retry') await retryLine(db, line, outcome.delayMs, outcome.yielded === true);
        else await settleLine(db, line, outcome);
      } catch (err) {
        if (stopping) return;
        logger.warn({ err, batchId: line?.batchId }, 'a batch line could not be run; it is retried');
        await idle();
      }
    }
  }

  const wake = () => {
    for (const waiting of [...wakeIdle]) waiting();
  };

  return {
    start() {
      for (let index = 0; index < deps.concurrency; index += 1) loops.push(loop());
    },
    wake,
    async stop() {
      stopping = true;
      inFlight.abort();
      wake();
      await Promise.all(loops);
    },
  };
}

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ApiError } from '@sbc/errors';
import { CANCEL_REQUESTED_CHANNEL, RUN_QUEUED_CHANNEL } from '../channels';
import {
  claimRun,
  EMPTY_USAGE,
  releaseLease,
  renewLease,
  settleRun,
  type Outcome,
  type RunCallerJson,
  type RunRow,
} from '../store/runs';
import { LeaseLost, runAgentLoop, writeHeld, type HeldRun, type LoopDeps } from './agent-loop';
import type { InvokeKeys } from './invoke-keys';

export interface WorkerPoolDeps extends LoopDeps {
  keys: InvokeKeys;
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  maxAttempts: number;
}

export interface WorkerPool {
  start(): Promise<void>;
  /** Looks for queued runs now (a run was just created in this process). */
  wake(): void;
  /** Stops claiming, aborts the runs in hand and gives their leases back so another worker resumes them. */
  stop(): Promise<void>;
}

/** Why a held run's signal aborted. */
type StopReason = 'cancelled' | 'lease_lost' | 'shutdown';

/**
 * The workers of one process: `concurrency` loops that each claim a run from PostgreSQL, renew its lease every
 * third of the lease while it runs, and settle it. A run whose worker dies is claimed again once its lease
 * runs out; after `maxAttempts` claims it fails instead, so a run that kills workers cannot loop forever.
 */
export function createWorkerPool(deps: WorkerPoolDeps): WorkerPool {
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const held = new Map<string, AbortController>();
  const loops: Promise<void>[] = [];
  const unsubscribes: (() => Promise<void>)[] = [];
  let stopping = false;
  let wakeIdle: (() => void)[] = [];
  const { logger } = deps;

  const wake = () => {
    const waiting = wakeIdle;
    wakeIdle = [];
    for (const resolve of waiting) resolve();
  };

  function idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, deps.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      wakeIdle.push(done);
    });
  }

  async function settleHeld(run: HeldRun, outcome: Outcome): Promise<void> {
    try {
      await writeHeld(deps, run, (tx, append) => settleRun(tx, append, run.run, outcome, run.holder));
    } catch (error) {
      if (!(error instanceof LeaseLost)) throw error;
    }
  }

  async function execute(run: RunRow): Promise<void> {
    const controller = new AbortController();
    held.set(run.id, controller);
    const heldRun: HeldRun = { run, holder, keySecret: '', signal: controller.signal, usage: { ...EMPTY_USAGE } };
    const caller = run.caller as unknown as RunCallerJson;
    const heartbeat = setInterval(
      () => {
        renewLease(deps.writer.db, run.id, holder, deps.leaseMs).then(
          (lease) => {
            if (!lease.held) controller.abort('lease_lost' satisfies StopReason);
            else if (lease.cancelRequested) controller.abort('cancelled' satisfies StopReason);
          },
          (err: unknown) => logger.warn({ err, runId: run.id }, 'renewing a run lease failed'),
        );
      },
      Math.max(50, Math.floor(deps.leaseMs / 3)),
    );
    let keyId: string | undefined;
    try {
      if (run.cancelRequestedAt) return await settleHeld(heldRun, { status: 'cancelled', usage: heldRun.usage });
      if (run.attempt > deps.maxAttempts) {
        const error = {
          code: 'worker_lost',
          message: `The run's worker stopped ${run.attempt - 1} times; it is not tried again.`,
        };
        return await settleHeld(heldRun, { status: 'failed', error, usage: heldRun.usage });
      }
      // A recovered run: the key its previous worker minted is revoked before a new one is made.
      if (run.invokeKeyId) await deps.keys.revoke(caller.user_id, run.invokeKeyId);
      try {
        const key = await deps.keys.mint(run);
        keyId = key.id;
        heldRun.keySecret = key.secret;
      } catch (error) {
        const refusal = ApiError.from(error);
        if (refusal.status >= 500) throw error;
        return await settleHeld(heldRun, {
          status: 'failed',
          error: { code: refusal.code, message: `The run's model-call key was refused: ${refusal.message}` },
          usage: heldRun.usage,
        });
      }
      await writeHeld(deps, heldRun, async () => undefined, { invokeKeyId: keyId });
      const outcome = await runAgentLoop(deps, heldRun);
      await settleHeld(heldRun, outcome);
    } catch (error) {
      const reason = controller.signal.aborted
        ? (controller.signal.reason as StopReason)
        : error instanceof LeaseLost
          ? 'lease_lost'
          : undefined;
      if (reason === 'cancelled') await settleHeld(heldRun, { status: 'cancelled', usage: heldRun.usage });
      else if (reason === 'shutdown') await releaseLease(deps.writer.db, run.id, holder);
      else if (reason !== 'lease_lost') {
        logger.error({ err: error, runId: run.id }, 'a run failed unexpectedly');
        await settleHeld(heldRun, {
          status: 'failed',
          error: { code: 'internal_error', message: 'The run failed inside the service.' },
          usage: heldRun.usage,
        });
      }
    } finally {
      clearInterval(heartbeat);
      held.delete(run.id);
      if (keyId)
        await deps.keys
          .revoke(caller.user_id, keyId)
          .catch((err: unknown) => logger.warn({ err, runId: run.id }, "revoking a run's key failed"));
    }
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      let run: RunRow | undefined;
      try {
        run = await claimRun(deps.writer, holder, deps.leaseMs);
      } catch (err) {
        if (!stopping) logger.warn({ err }, 'claiming a run failed');
      }
      if (!run) {
        if (!stopping) await idle();
        continue;
      }
      await execute(run).catch((err: unknown) => logger.error({ err, runId: run.id }, 'settling a run failed'));
    }
  }

  return {
    async start() {
      unsubscribes.push(
        await deps.writer.pubsub.subscribe(CANCEL_REQUESTED_CHANNEL, (runId) =>
          held.get(runId)?.abort('cancelled' satisfies StopReason),
        ),
        await deps.writer.pubsub.subscribe(RUN_QUEUED_CHANNEL, wake),
      );
      for (let i = 0; i < deps.concurrency; i++) loops.push(loop());
    },
    wake,
    async stop() {
      stopping = true;
      wake();
      for (const controller of held.values()) controller.abort('shutdown' satisfies StopReason);
      await Promise.all(loops);
      for (const unsubscribe of unsubscribes.splice(0)) await unsubscribe();
    },
  };
}

import { seededRandom } from '../seeded-random';
import { weightsOf, type FailureKind, type FaultPlan } from './fault-plan';

/** What one model call does, decided when it arrives. */
export type FaultAction =
  | { kind: 'none' }
  | { kind: 'reset' }
  | { kind: 'status'; status: 429 | 503; retryAfterS?: number }
  | { kind: 'hang'; ms: number }
  | { kind: 'cut'; afterChunks: number };

/** How each call went, as `GET /__faults` counts it: `ok` is served as usual, anything else was a fault. */
export type CallOutcome = 'ok' | FailureKind | 'down';

export interface FaultReport {
  plan: FaultPlan | null;
  /** When the current plan was set (ms since the epoch). */
  active_since_ms: number | null;
  counts: { calls: number; served: number; failed: number; by_outcome: Partial<Record<CallOutcome, number>> };
  /** Every call received while a plan was active, in arrival order (the first MAX_LOGGED_CALLS). */
  calls_while_active: Array<{ at_ms: number; outcome: CallOutcome }>;
  calls_log_truncated: boolean;
}

/** Keeps a long bench's call log to a few MB. */
const MAX_LOGGED_CALLS = 200_000;

/**
 * One simulator's faults: the plan an operator or test set, and what the calls it saw got. Off (no plan) it
 * only counts calls.
 */
export class FaultInjector {
  private plan: FaultPlan | undefined;
  private since = 0;
  private random: () => number = Math.random;
  private counts = { calls: 0, served: 0, failed: 0, byOutcome: new Map<CallOutcome, number>() };
  private log: Array<{ at_ms: number; outcome: CallOutcome }> = [];
  private truncated = false;

  constructor(private readonly clock: () => number = Date.now) {}

  /** Replaces the plan and starts the counts afresh. */
  set(plan: FaultPlan): void {
    this.plan = plan;
    this.since = this.clock();
    this.random = plan.seed === undefined ? Math.random : seededRandom(plan.seed);
    this.resetCounts();
  }

  /** Back to normal service; the counts of the plan just ended stay readable. */
  clear(): void {
    this.plan = undefined;
  }

  next(): FaultAction {
    const now = this.clock();
    const { action, outcome } = this.decide(now);
    this.counts.calls += 1;
    if (outcome === 'ok') this.counts.served += 1;
    else this.counts.failed += 1;
    this.counts.byOutcome.set(outcome, (this.counts.byOutcome.get(outcome) ?? 0) + 1);
    if (this.plan) {
      if (this.log.length < MAX_LOGGED_CALLS) this.log.push({ at_ms: now, outcome });
      else this.truncated = true;
    }
    return action;
  }

  report(): FaultReport {
    return {
      plan: this.plan ?? null,
      active_since_ms: this.plan ? this.since : null,
      counts: {
        calls: this.counts.calls,
        served: this.counts.served,
        failed: this.counts.failed,
        by_outcome: Object.fromEntries(this.counts.byOutcome),
      },
      calls_while_active: this.log,
      calls_log_truncated: this.truncated,
    };
  }

  private decide(now: number): { action: FaultAction; outcome: CallOutcome } {
    const plan = this.plan;
    if (!plan) return { action: { kind: 'none' }, outcome: 'ok' };
    if (now - this.since < plan.down_for_ms) {
      const action: FaultAction = plan.down_with === 'reset' ? { kind: 'reset' } : { kind: 'status', status: 503 };
      return { action, outcome: 'down' };
    }
    if (plan.failure_rate === 0 || this.random() >= plan.failure_rate)
      return { action: { kind: 'none' }, outcome: 'ok' };
    const kind = pickWeighted(weightsOf(plan.failures), this.random());
    switch (kind) {
      case '429':
        return { action: { kind: 'status', status: 429, retryAfterS: plan.retry_after_s }, outcome: kind };
      case '503':
        return { action: { kind: 'status', status: 503 }, outcome: kind };
      case 'hang':
        return { action: { kind: 'hang', ms: plan.hang_ms }, outcome: kind };
      case 'reset_mid_stream':
        return { action: { kind: 'cut', afterChunks: plan.reset_after_chunks }, outcome: kind };
      case 'reset_before_first_chunk':
        return { action: { kind: 'cut', afterChunks: 0 }, outcome: kind };
    }
  }

  private resetCounts(): void {
    this.counts = { calls: 0, served: 0, failed: 0, byOutcome: new Map() };
    this.log = [];
    this.truncated = false;
  }
}

/** The kind whose share of the total weight `draw` (0 ≤ draw < 1) falls in. */
function pickWeighted(weights: Array<[FailureKind, number]>, draw: number): FailureKind {
  const live = weights.filter(([, w]) => w > 0);
  const total = live.reduce((sum, [, w]) => sum + w, 0);
  let point = draw * total;
  for (const [kind, w] of live) {
    if (point < w) return kind;
    point -= w;
  }
  return live[live.length - 1]![0];
}

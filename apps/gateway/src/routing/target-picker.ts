import type { DeploymentLimiter, HalfOpenClaim, TargetHealth } from '@sbc/route-health';
import type { Target } from './targets';

/** What routing needs beyond the targets themselves; one per edge, chosen in main.ts. */
export interface RoutePolicy {
  /** Cooldowns shared by every edge (memory on one edge, Redis-backed across edges). */
  health: TargetHealth;
  /** Provider deployments' requests and tokens per minute. */
  limiter: DeploymentLimiter;
  /** Upstream attempts a call may make across its targets and fallback models (ROUTE_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** How long a call may go on trying targets before its first byte (ROUTE_FIRST_BYTE_DEADLINE_MS). */
  firstByteDeadlineMs: number;
  /**
   * Each attempt's outcome, for metrics and the call's span: `ok`, `failed` (counted), `refused` (another 4xx),
   * `overloaded`; with the status a failed attempt would be answered with.
   */
  onAttempt(target: Target, outcome: 'ok' | 'failed' | 'refused' | 'overloaded', failedStatus?: number): void;
}

/**
 * Hands out one call's targets in order: a cooling target is passed over, a deployment at its per-minute limit
 * is skipped (never waited on). Once no other target is left, the cooling ones get one half-open call, on the
 * one whose cooldown ends first, if this edge's slot for it is free. Reads only local state: no I/O.
 */
export class TargetPicker {
  private index = 0;
  private cooling?: Target[];
  private halfOpenAsked = false;

  constructor(
    private readonly targets: readonly Target[],
    private readonly policy: Pick<RoutePolicy, 'health' | 'limiter'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The next target to try, with its half-open claim when it is one (release it once the attempt ends). */
  next(): { target: Target; claim?: HalfOpenClaim } | undefined {
    const now = this.now();
    const { health } = this.policy;
    while (this.index < this.targets.length) {
      const target = this.targets[this.index++]!;
      if (health.coolingUntil(target.healthKey, now) !== undefined) {
        (this.cooling ??= []).push(target);
        continue;
      }
      if (this.takesFromLimit(target, now)) return { target };
    }
    if (!this.cooling || this.halfOpenAsked) return undefined;
    this.halfOpenAsked = true;
    const cooling = this.cooling;
    const claim = health.claimHalfOpen(
      cooling.map((target) => target.healthKey),
      now,
    );
    if (!claim) return undefined;
    const target = cooling.find((candidate) => candidate.healthKey === claim.key);
    if (!target || !this.takesFromLimit(target, now)) {
      claim.release();
      return undefined;
    }
    return { target, claim };
  }

  /** Of the targets passed over as cooling, the one whose cooldown ends first, and when. */
  soonestCooling(): { target: Target; untilMs: number } | undefined {
    const now = this.now();
    let soonest: { target: Target; untilMs: number } | undefined;
    for (const target of this.cooling ?? []) {
      const untilMs = this.policy.health.coolingUntil(target.healthKey, now);
      if (untilMs !== undefined && (!soonest || untilMs < soonest.untilMs)) soonest = { target, untilMs };
    }
    return soonest;
  }

  /** The lone target again, unless it started cooling or reached its limit meanwhile. */
  retry(target: Target): { target: Target } | undefined {
    const now = this.now();
    if (this.policy.health.coolingUntil(target.healthKey, now) !== undefined) return undefined;
    return this.takesFromLimit(target, now) ? { target } : undefined;
  }

  private takesFromLimit(target: Target, now: number): boolean {
    return !target.limits || this.policy.limiter.tryTake(target.healthKey, target.limits, now);
  }
}

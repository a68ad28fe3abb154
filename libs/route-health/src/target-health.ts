import {
  applyOutcome,
  coolingUntil,
  liveCooldown,
  mergeCooldown,
  type AttemptOutcome,
  type Cooldown,
  type KeyState,
} from './cooldown-rules';

export interface HalfOpenClaim {
  key: string;
  /** Frees this edge's slot for the key; idempotent. Record the call's outcome too (before or after). */
  release(): void;
}

export interface TargetHealth {
  /** No I/O: the local view. `key` is unique across accounts (the caller passes e.g. `byo:<userId>:<slug>`). */
  coolingUntil(key: string, now?: number): number | undefined;
  /** Every candidate cooling: take this edge's single half-open slot for the key whose cooldown ends first.
   *  Undefined when that key's slot is already taken on this edge, or its current cooldown already had its
   *  half-open call here (a claim released without a call still used it). The key's next recorded outcome,
   *  before or after release(), is the half-open call's. The returned release() is idempotent. */
  claimHalfOpen(keys: readonly string[], now?: number): HalfOpenClaim | undefined;
  /** Records an attempt's outcome. Never throws, never awaited by the hot path; shares cooldowns with every edge. */
  record(key: string, outcome: AttemptOutcome, now?: number): void;
  /** For the cooldown gauge: keys cooling now and when they end. */
  cooling(now?: number): Array<{ key: string; untilMs: number }>;
  close(): Promise<void>;
}

export interface TargetHealthOptions {
  /**
   * How long a half-open claim holds its slot (and marks the key's next outcome as the half-open one) when the
   * caller neither releases nor records, e.g. after a hang-up. Default 60 s.
   */
  halfOpenLeaseMs?: number;
}

interface HalfOpenSlot {
  claimedAt: number;
  held: boolean;
  /** The key's next outcome is the half-open call's (until the lease ends). */
  awaitingOutcome: boolean;
  /** The cooldown end this edge has already sent its half-open call for; no second one in the same window. */
  probedUntilMs: number;
}

const DEFAULT_HALF_OPEN_LEASE_MS = 60_000;

/**
 * One edge's view of every key: the cooldown rules applied to local outcomes, plus cooldowns other edges
 * publish. `onShared` hears each change to a key's shared part, for a store to fan it out.
 */
export class LocalTargetHealth implements TargetHealth {
  private readonly states = new Map<string, KeyState>();
  private readonly slots = new Map<string, HalfOpenSlot>();
  private readonly leaseMs: number;

  constructor(
    options: TargetHealthOptions = {},
    private readonly onShared: (key: string, cooldown: Cooldown | undefined) => void = () => {},
  ) {
    this.leaseMs = options.halfOpenLeaseMs ?? DEFAULT_HALF_OPEN_LEASE_MS;
  }

  coolingUntil(key: string, now = Date.now()): number | undefined {
    return coolingUntil(this.states.get(key), now);
  }

  claimHalfOpen(keys: readonly string[], now = Date.now()): HalfOpenClaim | undefined {
    let first: { key: string; untilMs: number } | undefined;
    for (const key of keys) {
      const untilMs = this.coolingUntil(key, now) ?? 0;
      if (!first || untilMs < first.untilMs) first = { key, untilMs };
    }
    if (!first) return undefined;
    const { key, untilMs } = first;
    const slot = this.slots.get(key);
    const leaseLive = slot !== undefined && now - slot.claimedAt < this.leaseMs;
    if (slot && ((slot.held && leaseLive) || slot.probedUntilMs === untilMs)) return undefined;
    const claim: HalfOpenSlot = { claimedAt: now, held: true, awaitingOutcome: true, probedUntilMs: untilMs };
    this.slots.set(key, claim);
    return {
      key,
      release: () => {
        claim.held = false;
      },
    };
  }

  record(key: string, outcome: AttemptOutcome, now = Date.now()): void {
    try {
      const slot = this.slots.get(key);
      const probe = slot !== undefined && slot.awaitingOutcome && now - slot.claimedAt < this.leaseMs;
      if (slot && probe) slot.awaitingOutcome = false;
      const effect = applyOutcome(this.states.get(key) ?? { streak: [] }, outcome, now, probe);
      this.store(key, effect.state);
      if (slot && probe && effect.state.cooldown) slot.probedUntilMs = effect.state.cooldown.untilMs;
      if (slot && !slot.held && !slot.awaitingOutcome && outcome.ok) this.slots.delete(key);
      if (effect.shared) this.onShared(key, effect.shared.cooldown);
    } catch {
      // A bad outcome object must not fail the call that reported it; the key simply keeps its state.
    }
  }

  cooling(now = Date.now()): Array<{ key: string; untilMs: number }> {
    const out: Array<{ key: string; untilMs: number }> = [];
    for (const [key, state] of this.states) {
      const untilMs = coolingUntil(state, now);
      if (untilMs !== undefined) out.push({ key, untilMs });
      else if (!liveCooldown(state.cooldown, now) && state.streak.length === 0) this.states.delete(key);
    }
    return out;
  }

  /** A cooldown from another edge (or from the shared store at start); `undefined` clears the key's. */
  applyShared(key: string, cooldown: Cooldown | undefined): void {
    const state = this.states.get(key) ?? { streak: [] };
    this.store(key, { ...state, cooldown: mergeCooldown(state.cooldown, cooldown) });
  }

  async close(): Promise<void> {
    this.states.clear();
    this.slots.clear();
  }

  private store(key: string, state: KeyState): void {
    if (!state.cooldown && state.streak.length === 0) this.states.delete(key);
    else this.states.set(key, state);
  }
}

/** One process's view, for embedded mode and a single edge. */
export function memoryTargetHealth(options: TargetHealthOptions = {}): TargetHealth {
  return new LocalTargetHealth(options);
}

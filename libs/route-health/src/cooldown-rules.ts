/**
 * The cooldown rules of CONTRACTS "Routing policy", as pure functions over one key's state. The stores
 * (memory, Redis) keep the state and share the `Cooldown` part; nothing here reads a clock or does I/O.
 */

/** Failures that count (CONTRACTS): connect errors (status undefined), 408, 409, 429, 500, 502, 503, 504, 529,
 *  and a stream that broke before its first chunk. Callers never report hang-ups or other 4xx. */
export type AttemptOutcome = { ok: true } | { ok: false; status?: number; retryAfterMs?: number };

const STREAK_LENGTH = 3;
const STREAK_WINDOW_MS = 30_000;
/** One step per trip of a failing run: 5 s, doubling, capped at 60 s. */
const COOLDOWN_STEPS_MS: readonly number[] = [5_000, 10_000, 20_000, 40_000, 60_000];
const MAX_RETRY_AFTER_MS = 60_000;
/**
 * How long after a cooldown ends its level is remembered. A key that trips again within it is "still failing"
 * and doubles; one that has been quiet longer starts again at 5 s (the contract leaves this open; without a
 * bound, a target that failed last week would go straight to 60 s).
 */
export const LEVEL_MEMORY_MS = 60_000;

const COUNTED_STATUSES = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

/** The shared part of a key's state: when its cooldown ends, and how many trips its failing run has had. */
export interface Cooldown {
  untilMs: number;
  level: number;
}

/** One edge's view of a key: the shared cooldown plus this edge's own failure streak. */
export interface KeyState {
  cooldown?: Cooldown;
  /** Times of this edge's counted failures in a row (at most STREAK_LENGTH - 1 are ever kept). */
  streak: readonly number[];
}

export interface OutcomeEffect {
  state: KeyState;
  /** Set when the shared part changed and must reach the other edges; `undefined` inside it means "cleared". */
  shared?: { cooldown: Cooldown | undefined };
}

export function isCountedFailure(outcome: AttemptOutcome): boolean {
  return !outcome.ok && (outcome.status === undefined || COUNTED_STATUSES.has(outcome.status));
}

function cooldownStepMs(level: number): number {
  return COOLDOWN_STEPS_MS[Math.min(level, COOLDOWN_STEPS_MS.length - 1)] ?? 60_000;
}

/** The cooldown as it stands at `now`: dropped once its level is no longer remembered. */
export function liveCooldown(cooldown: Cooldown | undefined, now: number): Cooldown | undefined {
  return cooldown && now <= cooldown.untilMs + LEVEL_MEMORY_MS ? cooldown : undefined;
}

export function coolingUntil(state: KeyState | undefined, now: number): number | undefined {
  const until = state?.cooldown?.untilMs;
  return until !== undefined && until > now ? until : undefined;
}

/**
 * Applies one attempt's outcome. `probe` marks the outcome of this edge's half-open call: a failure there re-cools
 * at the next level at once. Other failures that arrive while the key cools came from calls started before it
 * cooled; they neither extend the streak nor trip it again (a 429's retry-after still applies).
 */
export function applyOutcome(state: KeyState, outcome: AttemptOutcome, now: number, probe = false): OutcomeEffect {
  const current = liveCooldown(state.cooldown, now);
  if (outcome.ok) {
    if (!current) return { state: { streak: [] } };
    return { state: { streak: [] }, shared: { cooldown: undefined } };
  }
  if (!isCountedFailure(outcome)) return { state };

  let untilMs = current?.untilMs ?? 0;
  let level = current?.level ?? 0;
  let streak = state.streak;
  if (outcome.status === 429 && outcome.retryAfterMs !== undefined && outcome.retryAfterMs > 0) {
    untilMs = Math.max(untilMs, now + Math.min(outcome.retryAfterMs, MAX_RETRY_AFTER_MS));
  }
  const cooling = current !== undefined && current.untilMs > now;
  if (probe) {
    untilMs = Math.max(untilMs, now + cooldownStepMs(level));
    level += 1;
    streak = [];
  } else if (!cooling) {
    streak = [...streak.filter((at) => now - at <= STREAK_WINDOW_MS), now];
    if (streak.length >= STREAK_LENGTH) {
      untilMs = Math.max(untilMs, now + cooldownStepMs(level));
      level += 1;
      streak = [];
    }
  }
  const changed = untilMs !== (current?.untilMs ?? 0) || level !== (current?.level ?? 0);
  if (!changed) return { state: { cooldown: current, streak } };
  const cooldown = { untilMs, level };
  return { state: { cooldown, streak }, shared: { cooldown } };
}

/**
 * Folds a cooldown another edge published into this edge's view. Two edges that trip together agree on the later
 * end and the higher level; a clear (a success somewhere) resets the shared part and keeps this edge's streak.
 */
export function mergeCooldown(local: Cooldown | undefined, remote: Cooldown | undefined): Cooldown | undefined {
  if (!remote) return undefined;
  if (!local) return remote;
  return { untilMs: Math.max(local.untilMs, remote.untilMs), level: Math.max(local.level, remote.level) };
}

// Figures for bench/routing.mjs: per-phase summaries of what callers saw, and the calls that reached the
// failing target while it was cooling, found by replaying the simulator's call log through the cooldown rules.
import { percentile } from './load.mjs';

const round = (value, digits = 1) =>
  value === null || value === undefined || Number.isNaN(value) ? null : Number(value.toFixed(digits));

/** What callers saw in one stretch of samples ({ sentAt, ms, ok, attempts, error }). */
export function summarizeCalls(samples) {
  const good = samples.filter((s) => s.ok);
  const ms = good.map((s) => s.ms).sort((a, b) => a - b);
  const attempts = samples.map((s) => s.attempts).filter((a) => Number.isFinite(a));
  const errors = new Map();
  for (const s of samples) if (!s.ok) errors.set(s.error, (errors.get(s.error) ?? 0) + 1);
  return {
    calls: samples.length,
    succeeded: good.length,
    success_pct: samples.length ? round((100 * good.length) / samples.length, 3) : null,
    p50_ms: percentile(ms, 50),
    p99_ms: percentile(ms, 99),
    attempts_mean: attempts.length ? round(attempts.reduce((a, b) => a + b, 0) / attempts.length, 3) : null,
    attempts_max: attempts.length ? Math.max(...attempts) : null,
    errors: Object.fromEntries([...errors].sort((a, b) => b[1] - a[1]).slice(0, 5)),
  };
}

/** The outcome the edge records for a call, from the simulator's name for how it went. */
function attemptOutcome(outcome, retryAfterMs) {
  if (outcome === 'ok') return { ok: true };
  if (outcome === '429') return { ok: false, status: 429, retryAfterMs };
  if (outcome === '503') return { ok: false, status: 503 };
  return { ok: false }; // down (connection reset), resets: no status
}

/**
 * Replays the failing target's calls (in arrival order) through the cooldown rules, as the edge applied them,
 * and counts the calls that arrived inside a cooldown window. A call that arrives within `slackMs` of the window's
 * start was already on its way when the edge heard of the failure, so it is not held against the edge.
 * `health` is a fresh memoryTargetHealth from @sbc/route-health.
 */
export function callsWhileCooling(log, { health, retryAfterMs, slackMs }) {
  const windows = [];
  let window;
  for (const call of log) {
    const before = health.coolingUntil('target', call.at_ms);
    if (before !== undefined && window && call.at_ms >= window.start + slackMs)
      window.offsets.push(call.at_ms - window.start);
    health.record('target', attemptOutcome(call.outcome, retryAfterMs), call.at_ms);
    const after = health.coolingUntil('target', call.at_ms);
    if (after !== undefined && after !== before) {
      window = { start: call.at_ms, until: after, offsets: [] };
      windows.push(window);
    }
  }
  return {
    windows: windows.length,
    cooling_ms: windows.reduce((sum, w, i) => sum + Math.min(w.until, windows[i + 1]?.start ?? w.until) - w.start, 0),
    calls_while_cooling: windows.reduce((sum, w) => sum + w.offsets.length, 0),
    max_calls_per_window: windows.reduce((max, w) => Math.max(max, w.offsets.length), 0),
    /** How far into its window each such call arrived: a cluster just above the slack is calls in flight. */
    ms_into_window: windows.flatMap((w) => w.offsets).sort((a, b) => a - b),
  };
}

import { parseBetaHeader, shapeBetas } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import type { Engine } from '../routing/engines';

/** How long a target is taken to refuse a beta value after a 400 said so; the next call after that tries it again. */
const BETA_REFUSAL_TTL_MS = 60 * 60_000;
/** Targets remembered at once (least recently refusing first out), and values per target. */
const MAX_TARGETS = 4_096;
const MAX_VALUES_PER_TARGET = 64;

/** Who hears of what the memory does: the edge's metrics and its log. */
export interface BetaRefusalObserver {
  /** A target's 400 refused `values` in the call `requestId`, which was re-sent without them when `resent`. */
  refused(target: BetaTarget, values: readonly string[], requestId: string | undefined, resent: boolean): void;
  /** `count` values the caller sent were left out up front: the target refused them before. */
  leftOut(target: BetaTarget, count: number): void;
}

/** What the memory needs of a target: where it is kept (unique per account's endpoint) and its engine. */
export interface BetaTarget {
  healthKey: string;
  label: string;
  engine: Pick<Engine, 'dialect' | 'anthropicBeta'>;
}

/** The beta values one request to a target carries, and its pass headers with them. */
export interface BetaSending {
  values: string[];
  passHeaders: Record<string, string>;
}

/**
 * What this edge has seen its Anthropic-dialect targets refuse in `anthropic-beta`, so later calls leave those
 * values out up front instead of paying a refused request each time.
 *
 * Kept in this process, per edge, not in the shared store: it is read on every call that carries the header,
 * and a shared-store read there would be a round trip per call. What an edge does not share costs one refused
 * request per edge per value each hour, which the caller never sees (the call is re-sent at once). Bounded:
 * MAX_TARGETS targets (the least recently refusing forgotten first), MAX_VALUES_PER_TARGET values each.
 */
export class BetaRefusals {
  /** Target health key → value → until when (ms since the epoch) it is left out. Map order is recency. */
  private readonly byTarget = new Map<string, Map<string, number>>();

  constructor(
    private readonly observer?: BetaRefusalObserver,
    private readonly ttlMs = BETA_REFUSAL_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The values `target` is sent of the caller's `header`: its endpoint's policy applied, then what it refused
   * lately left out. Undefined for a target that takes no beta header (an OpenAI-dialect one).
   */
  sending(target: BetaTarget, header: string, passHeaders: Record<string, string>): BetaSending | undefined {
    if (target.engine.dialect !== 'anthropic') return undefined;
    const asked = shapeBetas(parseBetaHeader(header), target.engine.anthropicBeta);
    const refused = this.refusedBy(target.healthKey);
    const values = refused ? asked.filter((value) => !refused.has(value)) : asked;
    if (values.length < asked.length) this.observer?.leftOut(target, asked.length - values.length);
    return { values, passHeaders: withBetas(passHeaders, values) };
  }

  /** Remembers that `target` refused `values`, and says so. */
  remember(target: BetaTarget, values: readonly string[], requestId: string | undefined, resent: boolean): void {
    const until = this.now() + this.ttlMs;
    const known = this.byTarget.get(target.healthKey) ?? new Map<string, number>();
    this.byTarget.delete(target.healthKey);
    this.byTarget.set(target.healthKey, known);
    for (const value of values) {
      known.delete(value);
      known.set(value, until);
      if (known.size > MAX_VALUES_PER_TARGET) known.delete(known.keys().next().value!);
    }
    if (this.byTarget.size > MAX_TARGETS) this.byTarget.delete(this.byTarget.keys().next().value!);
    this.observer?.refused(target, values, requestId, resent);
  }

  /** The values a target refused and still counts as refusing; undefined when none. */
  private refusedBy(healthKey: string): Map<string, number> | undefined {
    const known = this.byTarget.get(healthKey);
    if (!known) return undefined;
    const now = this.now();
    for (const [value, until] of known) if (until <= now) known.delete(value);
    if (known.size > 0) return known;
    this.byTarget.delete(healthKey);
    return undefined;
  }
}

/** The edge's observer: a refusal is counted and logged (once per value learnt), a value left out is counted. */
export function reportBetaRefusals(
  metrics: { betaValues(target: BetaTarget, kind: 'refused' | 'left_out', count: number): void },
  logger: Pick<Logger, 'warn'>,
): BetaRefusalObserver {
  return {
    refused(target, values, requestId, resent) {
      metrics.betaValues(target, 'refused', values.length);
      const hour = Math.round(BETA_REFUSAL_TTL_MS / 60_000);
      logger.warn(
        { requestId, target: target.label, betas: values, resent },
        `upstream refused anthropic-beta values: ${resent ? 'call re-sent without them; ' : ''}they are left out ` +
          `of its calls on this edge for ${hour} min`,
      );
    },
    leftOut: (target, count) => metrics.betaValues(target, 'left_out', count),
  };
}

/** The pass headers with `anthropic-beta` set to `values` (absent when none is left). */
export function withBetas(passHeaders: Record<string, string>, values: readonly string[]): Record<string, string> {
  const headers = { ...passHeaders };
  if (values.length > 0) headers['anthropic-beta'] = values.join(',');
  else delete headers['anthropic-beta'];
  return headers;
}

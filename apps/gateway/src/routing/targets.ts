import type { Engine } from './engines';

/**
 * One place a call may be served (CONTRACTS "Routing policy"): an engine, who pays for it, and the names it goes
 * by. A model id resolves to an ordered list of these; the fallback models' lists follow.
 */
export interface Target {
  engine: Engine;
  /** `house` and `provider` targets are priced on credits; `byo` targets are the caller's own endpoints. */
  kind: 'house' | 'byo' | 'provider';
  /** `house`, `byo:<slug>` or `provider:<vendor>/<deployment>`: the reply's `x-sbc-served-by` and metrics label. */
  label: string;
  /** For usage: `house`, `byo:<slug>` or `provider:<vendor>`. */
  upstream: string;
  /** Where the target's cooldown is kept: unique across accounts (a caller's endpoint carries its owner). */
  healthKey: string;
  /** The model id the caller named that this target serves (the call's model, or one of its `models`). */
  callerModel: string;
  /** The catalog entry that prices the call (house and provider targets). */
  catalogId?: string;
  /** A provider deployment's per-minute limits: at either one, the deployment is skipped. */
  limits?: { rpm?: number; tpm?: number };
}

/**
 * Orders items by weighted random choice without replacement: each next item is drawn with probability
 * proportional to its weight among those left. Weight 0 is standby: those come after every weighted one, in
 * their listed order; a list with no positive weight is drawn as if all weighed the same. A list of one is
 * returned as it is.
 */
export function weightedOrder<T>(items: readonly T[], weightOf: (item: T) => number, random = Math.random): T[] {
  if (items.length < 2) return items as T[];
  const weighted: Array<{ item: T; weight: number }> = [];
  const standby: T[] = [];
  for (const item of items) {
    const weight = weightOf(item);
    if (weight > 0) weighted.push({ item, weight });
    else standby.push(item);
  }
  if (weighted.length === 0) return weightedOrder(items, () => 1, random);
  const ordered: T[] = [];
  let total = weighted.reduce((sum, entry) => sum + entry.weight, 0);
  while (weighted.length > 0) {
    let point = random() * total;
    let index = 0;
    while (index < weighted.length - 1 && point >= weighted[index]!.weight) point -= weighted[index++]!.weight;
    const [chosen] = weighted.splice(index, 1);
    total -= chosen!.weight;
    ordered.push(chosen!.item);
  }
  return ordered.concat(standby);
}

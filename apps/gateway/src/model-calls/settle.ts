import type { ModelPrice } from '@sbc/catalog';
import type { Dialect } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import {
  microcredits,
  microcreditsForMillicredits,
  microcreditsForNanoUsd,
  millicredits,
  millicreditsForNanoUsd,
  nanoUsd,
  type Microcredits,
  type Millicredits,
  type NanoUsd,
} from '@sbc/money';
import type { DeploymentLimiter } from '@sbc/route-health';
import type { Principal } from '../auth/authenticator';
import type { Budget, Reservation } from '../limits/budget';
import type { TokenHold } from '../limits/rate-limit';
import type { UsageEmitter, UsageFields } from '../usage/usage-events';
import { recordWithHooks, usageMarkOf, type HookPart } from './call-hooks';
import type { CallOutcome } from './call-outcome';
import type { CallerCall } from './plan';
import type { Pricing } from './pricing';

export interface SettleDeps {
  budget: Budget;
  /** A provider deployment's tokens count toward its per-minute limit. */
  route: { limiter: Pick<DeploymentLimiter, 'addTokens'> };
  usage: UsageEmitter;
  pricing: Pricing;
  logger: Logger;
}

/** What a call learned on its way, for settling it. */
export interface CallRecord {
  principal?: Principal;
  call?: CallerCall;
  price?: ModelPrice;
  reservation?: Reservation;
  tokenHold?: TokenHold;
  fairUse: boolean;
  outcome: CallOutcome;
  requestId: string;
  /** Set on a batch line's own call (not on one the edge makes for it): its answered usage event takes this id. */
  lineEventId?: string;
  atMs: number;
  startedAt: number;
  dialect: Dialect;
  sessionId: string | string[] | undefined;
  /** The parts of the hooks in play for the call (call-hooks.ts): their records go with the usage event. */
  hooks?: readonly HookPart[];
}

/**
 * Settles the reservation to the real cost and emits the call's usage event; resolves once the event is
 * durable (see usage-events), which the reply's last bytes wait for.
 */
export async function settle(deps: SettleDeps, state: CallRecord): Promise<void> {
  const { principal, call, price, outcome } = state;
  // Billing follows the target that served (its price is the admission's: see Admission.admit): credits only
  // when the service's engines served it.
  const target = outcome.target;
  const listCost = price ? deps.pricing.costNanoUsd(price, outcome.usage) : nanoUsd(0);
  if (target?.limits?.tpm !== undefined)
    deps.route.limiter.addTokens(target.healthKey, outcome.usage.inputTokens + outcome.usage.outputTokens);
  const fairUseCall = state.fairUse && target?.catalogId === 'house-fast';
  const billed = target !== undefined && target.kind !== 'byo' && !fairUseCall;
  const costMilli = billed ? millicreditsForNanoUsd(listCost) : millicredits(0);
  // A call is never charged past what it reserved: an upstream that ignored the output limit it was sent, or
  // a prompt that cost more than its bound, is the service's loss, not a cap or balance overdrawn.
  const reserved = state.reservation?.reservedMilli;
  const chargedMilli = reserved === undefined ? costMilli : millicredits(Math.min(costMilli, reserved));
  try {
    const tokens = outcome.usage.inputTokens + outcome.usage.outputTokens;
    await state.reservation?.settle(chargedMilli, tokens);
    // A cache hit made no model work: it counts no tokens against the key's tokens per minute.
    await state.tokenHold?.settle(outcome.cacheHit ? 0 : tokens);
    if (fairUseCall && principal) await deps.budget.recordFairUse(principal.userId, millicreditsForNanoUsd(listCost));
  } catch (error) {
    deps.logger.error({ requestId: state.requestId, err: error }, 'settling a call budget failed');
  }
  if (!principal || !call) return;
  const key = principal.key;
  const charged = creditsCharged(listCost, costMilli, chargedMilli);
  const fairUse = fairUseCall ? microcreditsForNanoUsd(listCost) : microcredits(0);
  const mark = usageMarkOf(state.hooks);
  const fields: UsageFields = {
    requestId: state.requestId,
    accountId: principal.userId,
    userId: principal.userId,
    keyId: key?.id ?? '',
    orgId: key?.orgId,
    model: call.callerModel,
    upstreamModel: target?.engine.model ?? '',
    upstream: target?.upstream ?? '',
    provider: target?.engine.label ?? '',
    dialectIn: state.dialect,
    dialectOut: target?.engine.dialect ?? '',
    route: key?.route || 'auto',
    inputTokens: BigInt(outcome.usage.inputTokens),
    outputTokens: BigInt(outcome.usage.outputTokens),
    cacheReadTokens: BigInt(outcome.usage.cacheReadTokens),
    cacheWriteTokens: BigInt(outcome.usage.cacheWriteTokens),
    reasoningTokens: BigInt(outcome.usage.reasoningTokens ?? 0),
    listCostNanoUsd: BigInt(listCost),
    creditsChargedMicrocredits: BigInt(charged),
    fairUseMicrocredits: BigInt(fairUse),
    isByok: target?.kind === 'byo',
    status: outcome.status,
    latencyMs: BigInt(Math.round(performance.now() - state.startedAt)),
    ttftMs: BigInt(outcome.ttftMs),
    sessionId: key?.incognito || typeof state.sessionId !== 'string' ? undefined : state.sessionId.slice(0, 128),
    stream: call.stream,
    keyLabel: key?.name ?? '',
    atMs: state.atMs,
    servedBy: target?.label ?? '',
    attempts: outcome.attempts,
    cacheHit: outcome.cacheHit === true,
    guardrailId: mark?.guardrailId ?? '',
    guardrailAction: mark?.guardrailAction ?? '',
  };
  const emitted = deps.usage.emit(fields, state.lineEventId);
  await (state.hooks ? recordWithHooks(emitted, state.hooks, fields, outcome) : emitted);
}

/**
 * What the ledger records as charged: the exact cost, since only the shared-store counters are rounded up to
 * whole millicredits, unless the reservation capped the charge below that.
 */
function creditsCharged(listCost: NanoUsd, costMilli: Millicredits, chargedMilli: Millicredits): Microcredits {
  if (chargedMilli <= 0) return microcredits(0);
  return chargedMilli < costMilli ? microcreditsForMillicredits(chargedMilli) : microcreditsForNanoUsd(listCost);
}

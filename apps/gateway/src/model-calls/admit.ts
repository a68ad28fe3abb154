import type { ModelPrice } from '@sbc/catalog';
import type { CallerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Principal } from '../auth/authenticator';
import type { Budget, BudgetSubject, Reservation } from '../limits/budget';
import type { Bucket, RateLimiter, TokenHold } from '../limits/rate-limit';
import type { Target } from '../routing/targets';
import type { UsageGate } from '../usage/usage-gate';
import { countRequestTokens, createTokenCounter } from './count-tokens';
import { bodyOf, promptOf, requestedMaxTokens, type CallerCall } from './plan';
import type { Pricing } from './pricing';
import { outputLimitField } from './read-call';

export interface AdmitDeps {
  rateLimit: RateLimiter;
  budget: Budget;
  pricing: Pricing;
  defaultMaxTokens: number;
  /** Whether a billable call's usage can be recorded now (usage/usage-gate.ts); absent: always. */
  usageGate?: Pick<UsageGate, 'refusal'>;
}

/** What a call was admitted under, for settling it. */
export interface AdmissionTerms {
  price?: ModelPrice;
  reservation?: Reservation;
  /** A house-fast call inside the caller's free fair use: counted for its windows, charged nothing. */
  fairUse: boolean;
  /**
   * The tokens the key's tokens-per-minute window counted for the call, corrected at settle, when no reservation
   * carries them (a call on the caller's own endpoint, or one whose first model's reservation was released).
   */
  tokenHold?: TokenHold;
}

function budgetSubject(principal: Principal): BudgetSubject {
  const key = principal.key;
  return {
    userId: principal.userId,
    keyId: key?.id,
    dailyCapCredits: key?.dailyLimitCredits === undefined ? undefined : Number(key.dailyLimitCredits),
    monthlyCapCredits: key?.monthlyLimitCredits === undefined ? undefined : Number(key.monthlyLimitCredits),
    team: principal.teamCaps,
  };
}

/** The prompt's tokens by the local tokenizer; a body the neutral parser cannot read keeps its byte bound. */
function countCallInput(call: CallerCall, bytes: number): number {
  try {
    const { countInput } = call.adapter;
    return countInput ? countInput(bodyOf(call), createTokenCounter()) : countRequestTokens(promptOf(call));
  } catch {
    return bytes;
  }
}

/** The prompt's count, made at most once per call however many steps ask for it. */
function inputCounter(call: CallerCall, bytes: number): () => number {
  let count: number | undefined;
  return () => (count ??= countCallInput(call, bytes));
}

/**
 * The admit step, run on each target as it is tried: the caller's request bucket, free fair use, the catalog's
 * output limit and the budget's reservation. Every call takes from its request bucket once: a priced call in the
 * round trip that reserves its budget, any other call (its own endpoint, free fair use) on its own, and a call
 * refused before either when it is refused (`takeWithoutTarget`), so a refusal's answer says what is left too.
 * Targets of one catalog model share one admission; a target priced as another model (a fallback model) releases
 * the earlier reservation and reserves its own. A model the budget refused is refused again without a round trip.
 */
export class Admission {
  readonly terms: AdmissionTerms = { fairUse: false };
  /** The caller's request bucket, until this call has taken from it. */
  private bucket?: Bucket;

  constructor(
    private readonly deps: AdmitDeps,
    private readonly principal: Principal,
    /** Where the bucket's and the reservation's headers go (the call's response), in the caller's dialect. */
    private readonly out: {
      addHeaders(headers: Record<string, string>): void;
      adapter?: Pick<CallerDialect, 'tokenLimitHeaders'>;
    },
  ) {
    this.bucket = deps.rateLimit.bucket(principal, out.adapter?.tokenLimitHeaders);
  }

  /** The catalog model the terms were admitted for (undefined: none yet). */
  private admittedFor?: string;
  private readonly refused = new Map<string, unknown>();

  /** Admits the call on a target, or throws the refusal (400 past the catalog's limit, 402, 429). */
  async admit(call: CallerCall, target: Target, bytes: number): Promise<void> {
    // The last target admitted is the one tried, so the terms' price is that of the target that served (list cost
    // is recorded for own endpoints too).
    const price = this.deps.pricing.priceOf(target);
    this.terms.price = price;
    const catalogId = target.kind === 'byo' ? undefined : target.catalogId;
    if (price && catalogId !== undefined && catalogId !== this.admittedFor) {
      const refusal = this.refused.get(catalogId);
      if (refusal) throw refusal;
      try {
        await this.admitPriced(call, target, price, catalogId, bytes);
      } catch (error) {
        this.refused.set(catalogId, error);
        throw error;
      }
    }
    if (this.bucket) await this.takeBucket(() => this.countInput(call, bytes)() + this.outputTokensOf(call));
  }

  private counted?: () => number;
  private countInput(call: CallerCall, bytes: number): () => number {
    return (this.counted ??= inputCounter(call, bytes));
  }

  /** The output a call not priced here may produce: its own limit, else the service's default. */
  private outputTokensOf(call: CallerCall): number {
    return call.outputLimit ?? requestedMaxTokens(call) ?? this.deps.defaultMaxTokens;
  }

  private async admitPriced(
    call: CallerCall,
    target: Target,
    price: ModelPrice,
    catalogId: string,
    bytes: number,
  ): Promise<void> {
    const { deps, terms } = this;
    // A billable call whose usage this edge cannot record now is refused (503 in its dialect), not served unbilled.
    const unrecordable = deps.usageGate?.refusal();
    if (unrecordable) throw unrecordable;
    if (terms.reservation) {
      // The earlier model's reservation is released before this one's is taken.
      const earlier = terms.reservation;
      terms.reservation = undefined;
      // Its tokens stay counted for the call and are corrected when the call settles.
      terms.tokenHold ??= earlier.tokens;
      await earlier.settle(0);
    }
    this.admittedFor = undefined;
    terms.fairUse = catalogId === 'house-fast' && (await deps.budget.fairUseLeft(this.principal.userId));
    const requested = requestedMaxTokens(call);
    const catalogLimit = deps.pricing.outputLimitOf(target);
    if (requested !== undefined && catalogLimit !== undefined && requested > catalogLimit) {
      const field = outputLimitField(call);
      const message = `${field} is ${requested}; ${target.callerModel} produces at most ${catalogLimit} output tokens.`;
      throw ApiError.invalid([{ path: field, code: 'too_big', message }]);
    }
    const modelLimit = catalogLimit ?? deps.defaultMaxTokens;
    if (terms.fairUse) {
      call.outputLimit = requested ?? modelLimit;
    } else {
      // The reservation takes from the bucket (its refusals carry the bucket's headers).
      const bucket = this.bucket;
      this.bucket = undefined;
      const admitted = await deps.budget.reserveCall(
        budgetSubject(this.principal),
        {
          price,
          inputTokens: { bound: bytes, count: this.countInput(call, bytes) },
          requestedOutputTokens: requested,
          modelOutputTokens: modelLimit,
        },
        { fairUse: catalogId === 'house-fast', bucket, outputLimitField: outputLimitField(call) },
      );
      this.out.addHeaders(admitted.headers ?? {});
      terms.reservation = admitted.reservation;
      call.outputLimit = admitted.outputTokens;
    }
    this.admittedFor = catalogId;
  }

  /**
   * A call answered without a target taking from its bucket (refused before one was tried, or a response-cache
   * hit) still counts, with no tokens, and its answer says what is left; a spent bucket's 429 is thrown instead.
   */
  async takeWithoutTarget(): Promise<void> {
    if (this.bucket) await this.takeBucket(() => 0);
  }

  private async takeBucket(tokens: () => number): Promise<void> {
    const bucket = this.bucket!;
    this.bucket = undefined;
    const taken = await this.deps.rateLimit.take(bucket, tokens);
    this.out.addHeaders(taken.headers);
    this.terms.tokenHold ??= taken.tokens;
  }
}

import type { IncomingHttpHeaders } from 'node:http';
import type { ChatResponse } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import type { CallHook, EventFilter, HookAnswer, HookedCall, HookPart } from '../model-calls/call-hooks';
import type { CallOutcome } from '../model-calls/call-outcome';
import { bodyOf } from '../model-calls/plan';
import { ReplyRecorder } from '../model-calls/reply-events';
import { isCacheable } from './cached-reply';
import { cacheKeyOf, type CacheScope } from './canonical-key';
import type { ReplyStore } from './reply-store';

/** The request header that sets a call's cache TTL in seconds (0 bypasses the cache). */
const CACHE_TTL_HEADER = 'x-sbc-cache-ttl';
/** The longest an entry is kept: 30 days, as a key's `cache_ttl_s` allows. */
const MAX_CACHE_TTL_S = 2_592_000;

export interface ResponseCacheDeps {
  store: ReplyStore;
  logger: Logger;
}

/** The seconds the header asks for; a value that is not a whole number in range is the caller's 400. */
function headerTtlS(headers: IncomingHttpHeaders): number | undefined {
  const value = headers[CACHE_TTL_HEADER];
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const seconds = /^\d{1,8}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(seconds <= MAX_CACHE_TTL_S)) {
    const message = `${CACHE_TTL_HEADER} must be a whole number of seconds from 0 to ${MAX_CACHE_TTL_S}.`;
    throw ApiError.invalid([{ path: CACHE_TTL_HEADER, code: 'invalid_value', message }]);
  }
  return seconds;
}

function scopeOf(principal: Principal): CacheScope {
  const team = principal.key?.orgId;
  return team ? { kind: 'team', id: team } : { kind: 'account', id: principal.userId };
}

/**
 * The response cache's part in one call, once the cache is in play for it: the lookup before the first target
 * (a hit answers the call), and keeping the reply of a miss. The store failing is never the caller's failure: the
 * call goes on as a miss and nothing is kept.
 */
class CacheCall implements HookPart {
  /** The reply to keep: the upstream's whole reply, or what its stream's events make. */
  private whole?: ChatResponse;
  private recorder?: ReplyRecorder;
  /** The entry's key, made when the hooks before this one have had their say (they may rewrite the call). */
  private key = '';

  constructor(
    private readonly deps: ResponseCacheDeps,
    private readonly ttlMs: number,
    /** The key opted in to caching replies that ask for tool calls. */
    private readonly withTools: boolean,
    private readonly requestId: string,
  ) {}

  /** The cached reply answers the call; `x-sbc-cache` says hit or miss either way. */
  async before({ principal, call, targets, out }: HookedCall): Promise<HookAnswer | undefined> {
    this.key = cacheKeyOf({
      scope: scopeOf(principal),
      dialect: call.adapter.name,
      targetModels: targets.map((target) => `${target.label}=${target.engine.model}`),
      // A hook that replaced the neutral request made it the call's content.
      body: call.translated && call.request ? { ...call.request } : bodyOf(call),
    });
    let found: string | undefined;
    try {
      found = await this.deps.store.get(this.key);
    } catch (error) {
      this.deps.logger.warn({ requestId: this.requestId, err: error }, 'reading the response cache failed');
    }
    out.addHeaders({ 'x-sbc-cache': found === undefined ? 'miss' : 'hit' });
    return found === undefined ? undefined : { reply: JSON.parse(found) as ChatResponse, cacheHit: true };
  }

  reply(reply: ChatResponse): undefined {
    this.whole = reply;
    return undefined;
  }

  stream(): EventFilter {
    const recorder = (this.recorder = new ReplyRecorder());
    return {
      rewrites: false,
      push(event) {
        recorder.push(event);
        return undefined;
      },
    };
  }

  /** Keeps a finished 200 reply when it is a complete answer; in the background, after the caller has it. */
  done(outcome: CallOutcome): void {
    const reply = outcome.status === 200 ? (this.whole ?? this.recorder?.finished()) : undefined;
    if (!reply || outcome.stopReason === 'max_tokens' || !isCacheable(reply, this.withTools)) return;
    this.deps.store.set(this.key, JSON.stringify(reply), this.ttlMs).catch((error: unknown) => {
      this.deps.logger.warn({ requestId: this.requestId, err: error }, 'writing the response cache failed');
    });
  }
}

/**
 * The exact response cache (CONTRACTS "Response cache"), a hook before the first target. A call is in play when its
 * key has a `cache_ttl_s` or it sends `x-sbc-cache-ttl` (which wins; 0 bypasses): only then is the store read, so a
 * call that did not opt in costs nothing here.
 */
export function createResponseCache(deps: ResponseCacheDeps): CallHook {
  return {
    partIn({ principal, headers, call, out }) {
      const requested = headerTtlS(headers);
      const ttlS = requested ?? principal.key?.cacheTtlS ?? 0;
      // The store keeps the neutral form of a chat reply; an embedding reply has none, so it is never kept.
      if (ttlS > 0 && call.adapter.modelKind === 'embedding') {
        out.addHeaders({ 'x-sbc-cache': 'bypass' });
        return undefined;
      }
      if (ttlS === 0) {
        if (requested === 0) out.addHeaders({ 'x-sbc-cache': 'bypass' });
        return undefined;
      }
      return new CacheCall(deps, ttlS * 1000, principal.key?.cacheTools ?? false, out.requestId);
    },
  };
}

import type { IncomingHttpHeaders } from 'node:http';
import type { ChatRequest, ChatResponse, SseFrame, StreamEvent, UpstreamFailure } from '@sbc/dialects';
import type { Principal } from '../auth/authenticator';
import type { Target } from '../routing/targets';
import type { UpstreamCall, UpstreamClient, UpstreamRequest } from '../upstream/client';
import type { UsageFields } from '../usage/usage-events';
import type { CallOutcome } from './call-outcome';
import { bodyOf, type CallerCall } from './plan';

// The step socket of the call path (STYLE "Hooks on the call path"): what may refuse, rewrite, answer or record a
// call without being the call plugs in here, as an ordered list of hooks chosen in main.ts. Before the first
// target, the hooks in play run in list order; after the reply, in the reverse order (the first hook sees the
// reply last, as the caller will). The exchange step forwards and relays and knows no hook by name.
//
// A call no hook is in play for pays nothing: each hook decides synchronously whether it has a part in the call,
// and with no part there is no array, no promise and no wrapper anywhere on the call's path.

/** What a hook sees of a call before its first target (the call's own objects, not a copy). */
export interface HookedCall {
  readonly principal: Principal;
  /** The call as read: its raw body (`bodyOf`), its neutral request (`neutralRequestOf`), stream or not. */
  readonly call: CallerCall;
  /** The targets it resolved to, in the order they will be tried. */
  readonly targets: readonly Target[];
  readonly headers: IncomingHttpHeaders;
  /** Headers a hook adds go out with the reply or with a refusal. */
  readonly out: { readonly requestId: string; addHeaders(headers: Record<string, string>): void };
  /**
   * The prompt's size in bytes, which admission bounds its tokens by (the body's, to begin with): a hook that adds
   * to the prompt adds its bytes here.
   */
  bytes: number;
}

export interface CallHook {
  /**
   * The hook's part in this call, or undefined when it is not in play. Synchronous and cheap (a header, a field of
   * the cached key): it runs on every call. May throw an ApiError, which refuses the call.
   */
  partIn(hooked: HookedCall): HookPart | undefined;
}

/** A reply a hook answers with itself: no target is tried and nothing is charged. */
export interface HookAnswer {
  reply: ChatResponse;
  /** Recorded in usage as a response-cache hit. */
  cacheHit: boolean;
}

/** What a part had the call's usage event record: the guardrail that acted on it, and how. */
export interface UsageMark {
  guardrailId: string;
  /** block, redact or log. */
  guardrailAction: string;
}

/** One hook's part in one call; every member is optional. */
export interface HookPart {
  /**
   * Before the first target: may refuse (throw an ApiError), rewrite the call (`rewrite…` below, or its body in
   * place before any neutral form was parsed), or answer it. An answer ends the walk: later hooks take no part.
   */
  before?(hooked: HookedCall): Promise<HookAnswer | undefined> | HookAnswer | undefined;
  /** Each upstream attempt as it is sent, and its reply as it arrives (to watch, never to change). */
  attempt?(request: UpstreamRequest, reply: UpstreamCall): void;
  /**
   * A whole reply in neutral form, before it is rendered for the caller: may return a rewritten reply, or refuse
   * it (throw an ApiError; the call is still billed for what the upstream did).
   */
  reply?(reply: ChatResponse): Promise<ChatResponse | undefined> | ChatResponse | undefined;
  /** A streamed reply: a filter its neutral events pass through on their way to the caller. */
  stream?(): EventFilter | undefined;
  /**
   * The reply exactly as the caller receives it, rendered in its dialect (ids included): a whole body, or every
   * frame of a stream (a stream with such a part goes frame by frame through its frame source, never through the
   * byte relay of text deltas). For a hook that keeps what the caller saw (stored Responses).
   */
  sent?: SentWatcher;
  /**
   * Awaited beside the call's usage event, before the last bytes of the reply (and after a refusal); must not
   * throw. `fields` are the usage event's, `outcome` carries the response id the caller saw.
   */
  record?(fields: UsageFields, outcome: CallOutcome): Promise<void>;
  /** Once the caller has the whole reply (not awaited). */
  done?(outcome: CallOutcome): void;
  /** Read when the usage event is made (after a refusal too): what the call's usage row records of this part. */
  mark?(): UsageMark | undefined;
}

/** What a hook sees of the reply as it goes out (`HookPart.sent`); never changes it. */
export interface SentWatcher {
  body(body: unknown): void;
  frames(frames: readonly SseFrame[]): void;
}

/** What a hook sees of a streamed reply: each neutral event, in order, before the caller's frames are made. */
export interface EventFilter {
  /**
   * True when the filter may change, hold back or end the stream: the caller's frames are then rendered from the
   * filtered events. A filter that only watches leaves a passed-through stream's frames as the upstream sent them.
   */
  readonly rewrites: boolean;
  /**
   * One event in; the events to pass on (undefined: the event unchanged; [] while holding back). Events held back
   * must be passed on by the `stop` or `end` event at the latest. An `error` event passed on ends the stream there
   * (its frames in the caller's dialect; the upstream is let go and the call billed for what was delivered).
   */
  push(event: StreamEvent): readonly StreamEvent[] | undefined;
}

/** The parts of the hooks in play for a call, in list order; undefined when none is. */
export function hookPartsIn(hooks: readonly CallHook[], hooked: HookedCall): HookPart[] | undefined {
  let parts: HookPart[] | undefined;
  for (const hook of hooks) {
    const part = hook.partIn(hooked);
    if (part) (parts ??= []).push(part);
  }
  return parts;
}

/** Runs the before-target hooks in order; an answer drops the answering hook and those after it from `parts`. */
export async function beforeTarget(parts: HookPart[], hooked: HookedCall): Promise<HookAnswer | undefined> {
  for (let index = 0; index < parts.length; index++) {
    const answer = await parts[index]!.before?.(hooked);
    if (answer) {
      parts.length = index;
      return answer;
    }
  }
  return undefined;
}

/** The neutral form of the call's request, parsed now if no step needed it yet; throws DialectRequestError (400). */
export function neutralRequestOf(call: CallerCall): ChatRequest {
  return (call.request ??= call.adapter.parse(bodyOf(call)));
}

/**
 * Replaces the call's neutral request: every engine is sent it, translated, from now on (a passed-through body
 * would not carry the change). The caller's fields the neutral form cannot carry are named in
 * `x-sbc-dropped-fields`, as for any translated call.
 */
export function rewriteRequest(call: CallerCall, request: ChatRequest): void {
  call.request = request;
  call.translated = true;
}

/** A whole reply through the parts' reply hooks, last part first; throws a hook's refusal. */
export async function replyThroughHooks(parts: readonly HookPart[], reply: ChatResponse): Promise<ChatResponse> {
  let current = reply;
  for (let index = parts.length - 1; index >= 0; index--) {
    const rewritten = await parts[index]!.reply?.(current);
    if (rewritten) current = rewritten;
  }
  return current;
}

/** The parts' watchers of the reply as sent; undefined when no part has one. */
export function sentWatchersOf(parts: readonly HookPart[] | undefined): SentWatcher[] | undefined {
  let watchers: SentWatcher[] | undefined;
  if (parts) for (const part of parts) if (part.sent) (watchers ??= []).push(part.sent);
  return watchers;
}

/** Shows a whole reply's body, as it goes out, to the parts that watch it. */
export function showSentBody(parts: readonly HookPart[] | undefined, body: unknown): void {
  if (parts) for (const part of parts) part.sent?.body(body);
}

/**
 * A stream's events through the parts' filters, last part first. Once a filter passes on an `error` event the chain
 * is halted: it passes nothing more on.
 */
export class EventChain {
  /** The failure a filter ended the stream with. */
  halted?: UpstreamFailure;
  /** Some filter may change the events: the caller's frames must be rendered from what the chain passes on. */
  readonly rewrites: boolean;

  private constructor(private readonly filters: readonly EventFilter[]) {
    this.rewrites = filters.some((filter) => filter.rewrites);
  }

  /** The chain of the parts' stream filters; undefined when no part has one. */
  static of(parts: readonly HookPart[]): EventChain | undefined {
    const filters: EventFilter[] = [];
    for (let index = parts.length - 1; index >= 0; index--) {
      const filter = parts[index]!.stream?.();
      if (filter) filters.push(filter);
    }
    return filters.length === 0 ? undefined : new EventChain(filters);
  }

  push(event: StreamEvent): readonly StreamEvent[] {
    if (this.halted) return [];
    let events: readonly StreamEvent[] = [event];
    for (const filter of this.filters) {
      const next: StreamEvent[] = [];
      for (const item of events) {
        const passed = filter.push(item);
        if (passed === undefined) next.push(item);
        else next.push(...passed);
      }
      events = next;
    }
    const stop = events.findIndex((item) => item.type === 'error');
    if (stop < 0) return events;
    this.halted = (events[stop] as Extract<StreamEvent, { type: 'error' }>).error;
    return events.slice(0, stop + 1);
  }
}

/** The upstream client as the call's attempts use it: watched by the parts that watch attempts. */
export function watchedUpstream(upstream: UpstreamClient, parts: readonly HookPart[] | undefined): UpstreamClient {
  const watchers = parts?.filter((part) => part.attempt !== undefined);
  if (!watchers || watchers.length === 0) return upstream;
  return {
    ...upstream,
    send(request) {
      const reply = upstream.send(request);
      for (const watcher of watchers) watcher.attempt!(request, reply);
      return reply;
    },
  };
}

/** The first mark a part left on the call, for its usage event. */
export function usageMarkOf(parts: readonly HookPart[] | undefined): UsageMark | undefined {
  if (parts)
    for (const part of parts) {
      const mark = part.mark?.();
      if (mark) return mark;
    }
  return undefined;
}

/** The usage event and the parts' records, awaited together. */
export async function recordWithHooks(
  emitted: Promise<void>,
  parts: readonly HookPart[],
  fields: UsageFields,
  outcome: CallOutcome,
): Promise<void> {
  const records = [emitted];
  for (const part of parts) if (part.record) records.push(part.record(fields, outcome));
  await Promise.all(records);
}

/** Tells the parts the caller has the whole reply. */
export function hooksDone(parts: readonly HookPart[] | undefined, outcome: CallOutcome): void {
  if (parts) for (const part of parts) part.done?.(outcome);
}

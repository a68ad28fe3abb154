import {
  upstreamAdapter,
  type SseEvent,
  type SseFrame,
  type StreamEvent,
  type StreamRenderer,
  type UpstreamFailure,
  type Usage,
} from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import type { EventChain, SentWatcher } from './call-hooks';
import type { CallerCall } from './plan';
import { frameSource, type FrameSource } from './stream-frames';

// A streamed reply whose call has hooks watching its events (call-hooks.ts): the caller's frames as usual when they
// only watch, rendered from the filtered events when one may change them.

/** A frame source that also reads the id of the reply as the caller receives it, from its first frames. */
export type HookedFrameSource = FrameSource & { readonly responseId?: string };

export function hookedFrameSource(
  call: CallerCall,
  engine: Engine,
  requestId: string,
  chain: EventChain | undefined,
  /** The parts watching the frames as they go out (`HookPart.sent`), when any does. */
  watchers?: readonly SentWatcher[],
): HookedFrameSource {
  const source = filteredSource(call, engine, requestId, chain);
  return watchers ? new WithResponseId(new WatchedFrames(source, watchers), false) : source;
}

function filteredSource(
  call: CallerCall,
  engine: Engine,
  requestId: string,
  chain: EventChain | undefined,
): HookedFrameSource {
  const options = { model: call.callerModel, includeUsage: call.includeUsage, requestId, request: call.request };
  // The first frames always come through `push` (text deltas are relayed by template only after them), so the
  // reply id is read even when the template relays the rest.
  if (!chain) return new WithResponseId(frameSource(call, engine, requestId), true);
  if (!chain.rewrites) {
    const base = frameSource(call, engine, requestId);
    return new WithResponseId(
      {
        push(event) {
          const pushed = base.push(event);
          for (const item of pushed.events) chain.push(item);
          return pushed;
        },
        // Every event goes through the decoder, so the filters see them all.
        textTemplate: () => undefined,
        fail: (failure) => base.fail(failure),
        cut: (usage) => base.cut(usage),
      },
      false,
    );
  }
  const parser = upstreamAdapter(engine.dialect).streamParser(call.request);
  const renderer = call.adapter.streamRenderer(options);
  return new WithResponseId(
    {
      get halted() {
        return chain.halted;
      },
      push(event) {
        const events: StreamEvent[] = [];
        for (const item of parser.push(event)) for (const passed of chain.push(item)) events.push(passed);
        return { frames: renderAll(renderer, events), events };
      },
      textTemplate: () => undefined,
      fail: (failure) => renderer.render({ type: 'error', error: failure }),
      cut: (usage) =>
        renderAll(renderer, [{ type: 'usage', usage }, { type: 'stop', reason: 'max_tokens' }, { type: 'end' }]),
    },
    false,
  );
}

/** A whole reply's events rendered as the caller's frames, through the call's filters when it has any. */
export function renderedEvents(
  call: CallerCall,
  requestId: string,
  events: readonly StreamEvent[],
  chain: EventChain | undefined,
): SseFrame[] {
  const renderer = call.adapter.streamRenderer({
    model: call.callerModel,
    includeUsage: call.includeUsage,
    requestId,
    request: call.request,
  });
  const passed = chain ? events.flatMap((event) => chain.push(event)) : events;
  return renderAll(renderer, passed);
}

/** The caller-facing reply id in the first frames that carry one, in whichever dialect. */
export function responseIdOf(frames: readonly SseFrame[]): string | undefined {
  for (const frame of frames) {
    let data: unknown;
    try {
      data = JSON.parse(frame.data);
    } catch {
      continue;
    }
    if (!data || typeof data !== 'object') continue;
    // Chat chunks carry `id`, a Messages stream's `message_start` its `message`, a Responses stream its `response`.
    const record = data as { id?: unknown; message?: { id?: unknown }; response?: { id?: unknown } };
    const id = record.response?.id ?? record.message?.id ?? record.id;
    if (typeof id === 'string') return id;
  }
  return undefined;
}

function renderAll(renderer: StreamRenderer, events: readonly StreamEvent[]): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const event of events) for (const frame of renderer.render(event)) frames.push(frame);
  return frames;
}

/** `source`, reading the reply id off its frames until it has one. */
class WithResponseId implements HookedFrameSource {
  responseId?: string;

  constructor(
    private readonly source: FrameSource,
    /** Text deltas may be relayed by the source's template (no filter needs to see them). */
    private readonly templates: boolean,
  ) {}

  get halted() {
    return this.source.halted;
  }

  push(event: SseEvent) {
    const pushed = this.source.push(event);
    this.responseId ??= responseIdOf(pushed.frames);
    return pushed;
  }

  textTemplate() {
    return this.templates ? this.source.textTemplate() : undefined;
  }

  fail(failure: UpstreamFailure) {
    return this.source.fail(failure);
  }

  cut(usage: Usage) {
    return this.source.cut(usage);
  }
}

/** `source`, every frame it makes shown to the watchers as it goes out; no template, so none goes around them. */
class WatchedFrames implements FrameSource {
  constructor(
    private readonly source: FrameSource,
    private readonly watchers: readonly SentWatcher[],
  ) {}

  get halted() {
    return this.source.halted;
  }

  push(event: SseEvent) {
    const pushed = this.source.push(event);
    this.show(pushed.frames);
    return pushed;
  }

  textTemplate() {
    return undefined;
  }

  fail(failure: UpstreamFailure) {
    return this.show(this.source.fail(failure));
  }

  cut(usage: Usage) {
    return this.show(this.source.cut(usage));
  }

  private show(frames: SseFrame[]): SseFrame[] {
    for (const watcher of this.watchers) watcher.frames(frames);
    return frames;
  }
}

import {
  createSseDecoder,
  encodeSse,
  mergeUsage,
  ZERO_USAGE,
  type EventTemplate,
  type SseDecoder,
  type SseEvent,
  type StopReason,
  type UpstreamFailure,
  type Usage,
} from '@sbc/dialects';
import type { Socket } from 'node:net';
import { isAbort, type BodySink, type UpstreamCall } from '../upstream/client';
import { whenAborted } from './abort-watch';
import { chunkBodyStart, chunkBuffer, chunkedSocket, chunkOf, writeChunk } from './chunked-body';
import type { CallResponse } from './call-response';
import type { InFlight } from './dispatch';
import type { CallerCall } from './plan';
import { CONTENT_EVENTS, DeliveredText, OutputGuard, usageOfCut, type FrameSource } from './stream-frames';

/** How a call still running at the drain deadline ends: `overloaded_error` to messages callers, retryable for all. */
export const DRAINED: UpstreamFailure = {
  status: 503,
  code: 'overloaded_error',
  message: 'The gateway is restarting and ended this call; retry it.',
};

/**
 * Slot bounds of the events one chunk's templated run is read into (two numbers per slot). Shared: a run is
 * read and written within one synchronous call. A chunk with more such events than fit relays the rest
 * through the decoder.
 */
const FOUND = new Int32Array(512);

/**
 * One streamed reply relayed to its caller, chunk by chunk as the upstream's body arrives: its frames in the
 * caller's dialect, and what it delivered, for accounting. The reply's last bytes (the terminator, and any
 * frames held with it) stay in `pending` for the caller to write once the call's usage is durable.
 *
 * Text deltas that a passthrough reads through a template are relayed as bytes (event-template.ts), the same
 * bytes the decoder and the passthrough would give; everything else goes through the SSE decoder and the
 * frame source. All of a stream's state is this one object, so relaying a token touches few places in
 * memory, which is what a token costs when thousands of streams are open.
 */
export class StreamRelay implements BodySink {
  /** What reached the caller, kept so a caller that hangs up before the usage event is still billed for it. */
  readonly delivered = new DeliveredText();
  usage: Usage = ZERO_USAGE;
  /** Ms from the call's start to its first token (0 while none came). */
  ttftMs = 0;
  stopReason?: StopReason;
  failed?: UpstreamFailure;
  /** The upstream's stream reached its own end. */
  ended = false;
  /** The output passed its limit and the stream was cut for the caller. */
  capped = false;
  /** The edge's drain deadline ended the stream. */
  drained = false;
  /** A hook's filter ended the stream (`failed` says why). */
  halted = false;
  /** Frames not written yet: what the last chunk made after the stream ended, and the stream's own end. */
  pending = '';

  private readonly guard: OutputGuard;
  private readonly decoder: SseDecoder;
  /** The template the frame source reads text deltas through now, as bytes (undefined: none, or not a passthrough). */
  private template: EventTemplate | undefined;
  private reply?: UpstreamCall;
  /** The caller's socket, once the body's chunks may be written to it directly (chunked-body.ts). */
  private socket: Socket | undefined;
  /** The caller's socket is full and the upstream paused until it drains. */
  private awaitingDrain = false;
  private readonly onDrain = () => {
    this.awaitingDrain = false;
    this.reply!.resume();
  };
  private settled = false;
  private done?: { resolve: () => void; reject: (error: Error) => void };
  private stopWatchingDrain: () => void = () => undefined;

  constructor(
    private readonly call: CallerCall,
    private readonly source: FrameSource,
    private readonly out: CallResponse,
    private readonly inFlight: InFlight,
    private readonly startedAt: number,
  ) {
    this.guard = new OutputGuard(call.outputLimit, this.delivered);
    this.decoder = createSseDecoder((event) => this.onEvent(event));
  }

  /**
   * Pushes the reply's body through to the caller as it arrives; settles when the body ends or breaks off
   * (what the caller still needs is in `pending`), and rejects when the caller hung up.
   */
  relay(reply: UpstreamCall, drainDeadline: AbortSignal | undefined): Promise<void> {
    this.reply = reply;
    return new Promise<void>((resolve, reject) => {
      this.done = { resolve, reject };
      // The head is written on its own, then the frames of the first chunk (already here: dispatch waited for
      // it), both to the corked socket, so they still leave in one write. Node keeps the head's string for the
      // whole response: written on its own, the write flattens it; taken along with the first frames, it
      // stayed a tree of some forty string pieces per stream (BENCH_HEAP: the most objects any one thing kept).
      const socket = this.out.res.socket;
      socket?.cork();
      this.out.flushHeaders();
      this.socket = chunkedSocket(this.out.res);
      try {
        reply.attach(this);
      } finally {
        socket?.uncork();
      }
      // A body already over (attach delivers what was held) has nothing left to end at the deadline.
      if (!this.settled) this.stopWatchingDrain = whenAborted(drainDeadline, () => this.endForDrain());
    });
  }

  /** A frame that ends the stream with an error, for a stream that failed or stopped short. */
  fail(failure: UpstreamFailure): void {
    this.failed = failure;
    for (const frame of this.source.fail(failure)) this.pending += encodeSse(frame);
  }

  data(chunk: Buffer): void {
    if (this.settled) return;
    let at = 0;
    if (this.template !== undefined && this.decoder.atEventBoundary()) {
      at = this.relayTemplated(chunk, this.template);
      if (at === chunk.length || this.capped) {
        if (this.capped) this.stop();
        return;
      }
    }
    try {
      this.decoder.feed(at === 0 ? chunk : chunk.subarray(at));
    } catch {
      // A chunk the translation cannot take ends the stream as broken off; the upstream is let go.
      this.brokeOff();
      this.stop();
      return;
    }
    if (this.capped || this.halted) {
      // The reply reached its output limit, or a hook ended it: the stream was ended for the caller; the upstream
      // is let go.
      this.stop();
      return;
    }
    this.template = this.source.textTemplate();
    // The stream's terminator (and what came with it) waits for the call's usage to become durable.
    if (this.pending === '' || this.ended) return;
    const frames = this.pending;
    this.pending = '';
    this.write(frames);
  }

  end(): void {
    try {
      this.decoder.end();
    } catch {
      this.brokeOff();
    }
    this.settle();
  }

  error(error: Error): void {
    if (isAbort(error) || this.inFlight.callerGone) return this.settle(error);
    this.brokeOff();
    this.settle();
  }

  /**
   * Relays the whole events at the start of `chunk` that `template` reads, in one write, and accounts for
   * their text; returns where they end (0 when the first is not one).
   */
  private relayTemplated(chunk: Buffer, template: EventTemplate): number {
    const step = 2 * template.slots;
    const text = 2 * template.textSlot;
    let at = 0;
    let events = 0;
    let length = 0;
    while (at < chunk.length && (events + 1) * step <= FOUND.length) {
      const base = events * step;
      const end = template.read(chunk, at, FOUND, base);
      if (end < 0) break;
      at = end;
      events += 1;
      length += template.callerLength(FOUND, base);
      const start = FOUND[base + text]!;
      const stop = FOUND[base + text + 1]!;
      if (start === stop) continue;
      this.sawToken();
      this.delivered.pushEscaped(chunk, start, stop);
      if (this.guard.reached()) {
        this.capped = true;
        break;
      }
    }
    if (events === 0) return 0;
    if (template.unchanged) {
      this.write(at === chunk.length ? chunk : chunk.subarray(0, at));
    } else {
      // Written where a chunk's body goes when it is framed here, so the events are copied once.
      const frames = this.socket ? chunkBuffer(length, this.socket) : Buffer.allocUnsafe(length);
      let pos = this.socket ? chunkBodyStart(length) : 0;
      for (let event = 0; event < events; event++) pos = template.writeCaller(chunk, FOUND, event * step, frames, pos);
      this.send(frames);
    }
    if (this.capped) this.cut();
    return at;
  }

  /** One upstream event through the frame source: the caller's frames into `pending`, its accounting here. */
  private onEvent(event: SseEvent): void {
    if (this.capped || this.halted) return;
    const { frames, events } = this.source.push(event);
    for (const item of events) {
      if (CONTENT_EVENTS.has(item.type)) {
        this.sawToken();
        const piece =
          item.type === 'tool_arguments'
            ? item.delta
            : item.type === 'tool_call'
              ? item.name
              : 'text' in item
                ? item.text
                : '';
        if (piece) {
          this.delivered.push(piece);
          if (this.guard.reached()) this.capped = true;
        }
      }
      if (item.type === 'start' && item.usage) this.usage = mergeUsage(this.usage, item.usage);
      else if (item.type === 'usage') this.usage = mergeUsage(this.usage, item.usage);
      else if (item.type === 'stop') this.stopReason = item.reason;
      else if (item.type === 'end') this.ended = true;
      else if (item.type === 'error') this.failed = item.error;
    }
    for (const frame of frames) this.pending += encodeSse(frame);
    if (this.capped) this.cut();
    else if (this.source.halted && !this.halted) {
      // Billed like a stream cut at its limit: what was delivered, and the prompt.
      this.halted = true;
      this.usage = usageOfCut(this.call, this.usage, this.delivered);
    }
  }

  /** A token reached the caller: the first one sets the time to first token. */
  private sawToken(): void {
    if (this.ttftMs === 0) this.ttftMs = Math.max(1, Math.round(performance.now() - this.startedAt));
  }

  /** The stream ends at its output limit: usage counted from what was delivered, and the frames that end it. */
  private cut(): void {
    this.usage = usageOfCut(this.call, this.usage, this.delivered);
    for (const frame of this.source.cut(this.usage)) this.pending += encodeSse(frame);
  }

  /**
   * Writes frames to the caller: framed as a chunk here when the socket takes them (an empty chunk would end the body).
   */
  private write(frames: string | Buffer): void {
    if (frames.length === 0) return;
    this.send(this.socket ? chunkOf(frames, this.socket) : frames);
  }

  /**
   * Writes `bytes`: framed as a chunk already when the socket takes them (`this.socket`), else through `res`.
   * A slow caller holds the upstream back instead of filling the edge's memory (a hang-up while paused
   * aborts like any other). Chunks the upstream had already delivered still come while paused: one drain
   * listener is enough.
   */
  private send(bytes: string | Buffer): void {
    const target = this.socket ?? this.out.res;
    const taken = this.socket ? writeChunk(this.socket, bytes as Buffer) : this.out.res.write(bytes);
    if (taken || this.awaitingDrain) return;
    this.awaitingDrain = true;
    this.reply!.pause();
    target.once('drain', this.onDrain);
  }

  private brokeOff(): void {
    if (!this.failed) this.fail({ status: 502, message: 'The upstream stream broke off.' });
  }

  /** Ends the relay here and lets the upstream go. */
  private stop(): void {
    this.settle();
    this.reply!.abort();
  }

  /** At the drain deadline a stream still running ends with its dialect's error event instead of a reset. */
  private endForDrain(): void {
    if (this.settled) return;
    this.drained = true;
    if (!this.failed) this.fail(DRAINED);
    this.stop();
  }

  private settle(error?: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.stopWatchingDrain();
    // A kept-alive socket outlives this reply.
    if (this.awaitingDrain) this.socket?.off('drain', this.onDrain);
    if (error) this.done!.reject(error);
    else this.done!.resolve();
  }
}

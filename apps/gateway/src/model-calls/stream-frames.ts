import {
  copyBytes,
  createTranslatedStream,
  upstreamAdapter,
  type CallerStream,
  type UpstreamFailure,
  type Usage,
} from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import { countRequestTokens, createTokenCounter } from './count-tokens';
import { passthroughTo, promptOf, type CallerCall } from './plan';

// The stream relay's pieces: upstream events into the caller's frames (passed through or translated, by the
// dialects' adapters), the guard on a priced stream's output, and the usage of a stream that did not reach its
// upstream's own end.

/**
 * The caller's frames of one streamed reply; the frames that end it early come from its dialect too. `halted` is
 * set once a hook's filter ended the stream (call-hooks.ts): the upstream is let go.
 */
export type FrameSource = CallerStream & { readonly halted?: UpstreamFailure };

export function frameSource(call: CallerCall, engine: Engine, requestId: string): FrameSource {
  const options = { model: call.callerModel, includeUsage: call.includeUsage, requestId, request: call.request };
  const passthrough = passthroughTo(call, engine);
  if (passthrough) return passthrough.stream(options);
  return createTranslatedStream(call.adapter, upstreamAdapter(engine.dialect), options);
}

/** Bytes a stream's delivered text starts with room for; it doubles as needed. */
const DELIVERED_START_BYTES = 512;

/**
 * The text a stream delivered, kept so a call that does not reach its upstream's usage is still counted. It
 * is held as one JSON string body in UTF-8 (the text escaped as JSON.stringify escapes it, without the
 * quotes), about a byte per character: text deltas the byte relay reads (event-template.ts) are appended as
 * they came off the wire, with no string made per token, and text pushed as a string is escaped first.
 */
export class DeliveredText {
  private bytes?: Buffer;
  private length = 0;

  push(piece: string): void {
    const escaped = JSON.stringify(piece);
    const size = Buffer.byteLength(escaped) - 2;
    this.room(size);
    this.bytes!.write(escaped.slice(1, -1), this.length);
    this.length += size;
  }

  /** Appends `source[start, end)`, a string body as JSON.stringify writes it, in well-formed UTF-8. */
  pushEscaped(source: Buffer, start: number, end: number): void {
    this.room(end - start);
    this.length = copyBytes(source, start, end, this.bytes!, this.length);
  }

  get empty(): boolean {
    return this.length === 0;
  }

  /** Bytes held: at least the text's length in UTF-8, so at least its count of tokens (none is under a byte). */
  get size(): number {
    return this.length;
  }

  /** The text, or what was delivered after the first `from` bytes (a size this had). */
  text(from = 0): string {
    return this.length === from ? '' : (JSON.parse(`"${this.bytes!.toString('utf8', from, this.length)}"`) as string);
  }

  private room(more: number): void {
    const needed = this.length + more;
    if (this.bytes && needed <= this.bytes.length) return;
    // Not from Buffer's shared pool: a long-lived slice would keep a whole pool slab alive.
    const grown = Buffer.allocUnsafeSlow(Math.max(DELIVERED_START_BYTES, needed, 2 * (this.bytes?.length ?? 0)));
    this.bytes?.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }
}

/**
 * Local counts run this far past an upstream's own before a stream is taken for one that ignores its output
 * limit: vendors' tokenizers differ from o200k (the bundled simulator counts words), and a well-behaved
 * upstream must always reach its own stop. The charge never passes the reservation either way (settle).
 */
const RUNAWAY_FACTOR = 2;

/**
 * Watches a priced stream's output against the limit it was admitted under (and sent upstream), so an
 * upstream that ignores that limit is stopped instead of streaming on at the service's cost. Nothing is
 * counted while the delivered text holds fewer bytes than the limit allows tokens (a token is at least a
 * byte); from then on, what was delivered since the last look is counted each time.
 */
export class OutputGuard {
  private readonly stopAt: number;
  private tokens = 0;
  private counted = 0;
  private count?: (text: string) => number;

  constructor(
    limit: number | undefined,
    private readonly delivered: DeliveredText,
  ) {
    this.stopAt = limit === undefined ? Infinity : RUNAWAY_FACTOR * Math.max(limit, 1);
  }

  /** True once the text delivered so far has run past the limit. */
  reached(): boolean {
    const size = this.delivered.size;
    if (size < this.stopAt || size === this.counted) return this.tokens >= this.stopAt;
    this.count ??= createTokenCounter();
    this.tokens += this.count(this.delivered.text(this.counted));
    this.counted = size;
    return this.tokens >= this.stopAt;
  }
}

/** Usage of a stream the edge stopped at its output limit: what was delivered, counted, and the prompt. */
export function usageOfCut(call: CallerCall, reported: Usage, delivered: DeliveredText): Usage {
  const counted = usageOfAbandoned(call, { ...reported, outputTokens: 0 }, delivered);
  return { ...counted, outputTokens: Math.max(reported.outputTokens, counted.outputTokens) };
}

export const CONTENT_EVENTS = new Set(['text', 'reasoning', 'refusal', 'tool_call', 'tool_arguments']);

/**
 * Usage of a call the caller abandoned. Upstreams report usage at the end of a stream, which an abandoned
 * call never reaches; what the caller already received is counted with the tokenizer, and the prompt from
 * the request, so hanging up just before the end does not make a call free.
 */
export function usageOfAbandoned(call: CallerCall, reported: Usage, delivered: DeliveredText): Usage {
  const usage = { ...reported };
  // One budget of exact counting for the whole call, output and prompt together.
  const count = createTokenCounter();
  // Anthropic's message_start already reports an output count (1): what was delivered counts when larger.
  if (!delivered.empty) usage.outputTokens = Math.max(usage.outputTokens, count(delivered.text()));
  if (usage.inputTokens === 0 && (usage.outputTokens > 0 || !delivered.empty)) {
    try {
      usage.inputTokens = countRequestTokens(promptOf(call), count);
    } catch {
      usage.inputTokens = 0;
    }
  }
  return usage;
}

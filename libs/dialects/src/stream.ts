import type { EventTemplate } from './event-template';
import { dialectId } from './ids';
import type { SseFrame, StopReason, StreamEvent, Usage } from './ir';
import type { SseEvent } from './sse';
import { UNKNOWN_UPSTREAM_STATUS } from './stream-errors';

/** The shapes every stream parser and renderer share, and the helpers they have in common. */

/** Upstream SSE events of one streamed reply into neutral events. */
export interface UpstreamStreamParser {
  push(event: SseEvent): StreamEvent[];
}

/** Upstream frames to forward unchanged (or nearly), plus the neutral events they carried for accounting. */
export interface StreamPassthrough {
  push(event: SseEvent): { frames: SseFrame[]; events: StreamEvent[] };
  /**
   * The text deltas `push` now reads through a template, as bytes (event-template.ts): an event it reads is
   * the frame `push` would forward, whose one neutral event is its slot's text (none when empty), and reading
   * it leaves the passthrough as it was. Undefined while there is no such template.
   */
  textTemplate(): EventTemplate | undefined;
}

/** What a renderer produced, for the gateway's accounting and logs. */
export interface StreamSummary {
  /** Tool calls the caller was sent. */
  toolCalls: number;
  /** The stop reason the caller was sent (settled against the tool calls); absent until the stream ended. */
  stopReason?: StopReason;
  /** Usage merged from everything the upstream reported. */
  usage: Usage;
}

/** Neutral events into the caller's frames; a small state machine per reply. */
export interface StreamRenderer {
  render(event: StreamEvent): SseFrame[];
  summary(): StreamSummary;
}

/** Parses a `data:` payload; `undefined` for text that is not JSON (the parsers report it). */
export function parseData(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

/** A payload that is not a JSON object: the upstream is broken, and the caller is told so in-stream. */
export const malformedStreamEvent = (): StreamEvent => ({
  type: 'error',
  error: {
    status: UNKNOWN_UPSTREAM_STATUS,
    message: 'The upstream sent a stream event that is not a JSON object.',
    code: null,
    param: null,
  },
});

/**
 * The caller-facing id for an upstream's: kept when it already has the dialect's prefix, prefixed when not
 * (as the non-streaming renderers do, so logs can match it to the upstream's), new when there is none.
 */
export function callerId(prefix: string, upstreamId: string): string {
  if (upstreamId === '') return dialectId(prefix);
  return upstreamId.startsWith(prefix) ? upstreamId : prefix + upstreamId;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

import type { AssistantBlock, StopReason, Usage } from '@sbc/dialects';
import type { Target } from '../routing/targets';

/** What a finished call reports for accounting. */
export interface CallOutcome {
  /** Status as the caller saw it; 499 when the caller hung up. */
  status: number;
  /** The target that served the call, or the last one tried when none answered. */
  target?: Target;
  /** Upstream attempts the call made. */
  attempts: number;
  usage: Usage;
  /** Ms from the start of the call to its first token (0 when none came). */
  ttftMs: number;
  stopReason?: StopReason;
  /** What the reply said, read only when telemetry captures content (the text delivered, for a stream). */
  completion?: () => AssistantBlock[];
  /** The reply was replayed from the response cache: no target was tried, nothing is charged. */
  cacheHit?: boolean;
  /**
   * The id of the reply as the caller received it (`chatcmpl-…`, `resp_…`, `msg_…`), when the call has hooks (the
   * after-reply hooks' record reads it); undefined for a reply that carries none (embeddings) or a refusal.
   */
  responseId?: string;
}

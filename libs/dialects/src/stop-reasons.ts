import type { StopReason } from './ir';

/** Stop reasons across the dialects (dialects.md §6.5). */

export function stopFromChat(finishReason: unknown): StopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

export function stopFromMessages(stopReason: unknown): StopReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'stop_sequence':
    case 'tool_use':
    case 'refusal':
    case 'pause_turn':
      return stopReason;
    case 'model_context_window_exceeded':
      return 'context_window_exceeded';
    default:
      return 'end_turn';
  }
}

export function chatFinishReason(reason: StopReason): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (reason) {
    case 'max_tokens':
    case 'context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export function messagesStopReason(reason: StopReason): string {
  return reason === 'context_window_exceeded' ? 'model_context_window_exceeded' : reason;
}

/** Responses has no stop reason: a status plus, when incomplete, why. */
export function responsesStatus(reason: StopReason): {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
} {
  switch (reason) {
    case 'max_tokens':
    case 'context_window_exceeded':
      return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    case 'refusal':
      return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
    default:
      return { status: 'completed', incomplete_details: null };
  }
}

/**
 * The reason follows the tool calls actually emitted, not the upstream's word: some OpenAI-compatible servers
 * say `stop` after emitting calls, and a caller that sees calls must be told to answer them.
 */
export function settleStopReason(reason: StopReason, emittedToolCalls: boolean): StopReason {
  if (emittedToolCalls && (reason === 'end_turn' || reason === 'stop_sequence')) return 'tool_use';
  if (!emittedToolCalls && reason === 'tool_use') return 'end_turn';
  return reason;
}

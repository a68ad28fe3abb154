import type { ChatResponse, StopReason } from '@sbc/dialects';

// A cached reply is kept in the neutral form (libs/dialects ir.ts), whatever dialect asked and whatever engine
// answered, so a hit is rendered in the dialect of whoever asks next, streamed or not.

/** Stop reasons of a complete answer: only those are cached (a cut, a refusal or a paused turn is not). */
const COMPLETE: ReadonlySet<StopReason> = new Set(['end_turn', 'stop_sequence', 'tool_use']);

/**
 * Whether a finished reply may be cached: a complete answer, and one that asks for tool calls, or that the
 * gateway ran MCP tools for, only when the key opted in (a replay would repeat the calls' side effects, or show
 * results the tools did not give this time).
 */
export function isCacheable(reply: ChatResponse, withTools: boolean): boolean {
  if (!COMPLETE.has(reply.stopReason)) return false;
  if (withTools) return true;
  return (
    !reply.content.some((block) => block.type === 'tool_call') && !reply.mcp?.some((item) => item.type === 'mcp_call')
  );
}

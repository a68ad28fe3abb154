import type { ChatResponse } from '@sbc/dialects';
import { isCacheable } from './cached-reply';

const usage = { inputTokens: 12, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 };

const reply = (over: Partial<ChatResponse> = {}): ChatResponse => ({
  id: 'msg_1',
  model: 'sim',
  created: 1_700_000_000,
  content: [
    { type: 'reasoning', text: 'Thinking.', signature: 'sig', origin: 'anthropic' },
    { type: 'text', text: 'Hello there.' },
    { type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
  ],
  stopReason: 'tool_use',
  usage,
  ...over,
});

describe('isCacheable', () => {
  it('takes complete answers only', () => {
    const text = [{ type: 'text' as const, text: 'a' }];
    expect(isCacheable(reply({ content: text, stopReason: 'end_turn' }), false)).toBe(true);
    expect(isCacheable(reply({ content: text, stopReason: 'stop_sequence' }), false)).toBe(true);
    for (const cut of ['max_tokens', 'refusal', 'pause_turn', 'context_window_exceeded'] as const)
      expect(isCacheable(reply({ content: text, stopReason: cut }), true)).toBe(false);
  });

  it('takes a reply that asks for tool calls only when the key opted in', () => {
    expect(isCacheable(reply(), false)).toBe(false);
    expect(isCacheable(reply(), true)).toBe(true);
  });

  it('takes an answer the gateway ran MCP tools for only when the key opted in to tool calls', () => {
    const text = [{ type: 'text' as const, text: 'a' }];
    const ran = {
      type: 'mcp_call' as const,
      serverLabel: 'everything',
      name: 'echo',
      arguments: '{}',
      output: 'Echo',
      isError: false,
    };
    expect(isCacheable(reply({ content: text, stopReason: 'end_turn', mcp: [ran] }), false)).toBe(false);
    expect(isCacheable(reply({ content: text, stopReason: 'end_turn', mcp: [ran] }), true)).toBe(true);
    const listedOnly = { type: 'mcp_list_tools' as const, serverLabel: 'everything', tools: [] };
    expect(isCacheable(reply({ content: text, stopReason: 'end_turn', mcp: [listedOnly] }), false)).toBe(true);
  });
});

import { dialectId } from '../ids';
import type { McpItem } from '../ir';
import { parseToolArguments } from '../tool-arguments';

/**
 * A step the gateway took with the caller's MCP servers as Anthropic's MCP connector shows it: a call is an
 * `mcp_tool_use` block and its `mcp_tool_result`; the tools offered have no block of their own in Messages.
 */
export function mcpBlocks(item: McpItem): Array<Record<string, unknown>> {
  if (item.type !== 'mcp_call') return [];
  const id = dialectId('mcptoolu_');
  return [
    {
      type: 'mcp_tool_use',
      id,
      name: item.name,
      server_name: item.serverLabel,
      input: parseToolArguments(item.arguments),
    },
    {
      type: 'mcp_tool_result',
      tool_use_id: id,
      is_error: item.isError,
      content: [{ type: 'text', text: item.output }],
    },
  ];
}

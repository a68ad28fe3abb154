import { dialectId } from '../ids';
import type { McpItem } from '../ir';

/**
 * A step the gateway took with the caller's MCP tools as a Responses output item (OpenAI's `mcp_list_tools` and
 * `mcp_call`), shared by the non-streaming and the stream renderer so both show it alike.
 */
export function mcpOutputItem(item: McpItem): Record<string, unknown> {
  if (item.type === 'mcp_list_tools') {
    return {
      id: dialectId('mcpl_'),
      type: 'mcp_list_tools',
      server_label: item.serverLabel,
      tools: item.tools.map((tool) => ({
        name: tool.name,
        description: tool.description ?? null,
        input_schema: tool.inputSchema,
        annotations: null,
      })),
      error: null,
    };
  }
  return {
    id: dialectId('mcp_'),
    type: 'mcp_call',
    status: item.isError ? 'failed' : 'completed',
    server_label: item.serverLabel,
    name: item.name,
    arguments: item.arguments === '' ? '{}' : item.arguments,
    output: item.isError ? null : item.output,
    error: item.isError ? item.output : null,
    approval_request_id: null,
  };
}

import type { UsageGeneration } from '../../api/types';

/**
 * What a request log row is. The log lists model calls, batch lines and MCP tool calls alike; these are told apart by
 * what the API already says of them: a batch line's request id is its line id (`batch_req_…`, `msgbatch_req_…`,
 * docs/batches.md), and a tool call is served by `mcp:<server>` with `<server>__<tool>` as its model (docs/mcp.md).
 */
export type CallKind = 'model' | 'batch' | 'tool';

type Row = Pick<UsageGeneration, 'model' | 'request_id' | 'served_by'>;

const TOOL_SERVER = 'mcp:';
const BATCH_LINE = /^(msg)?batch_req_([0-9A-Za-z]+)_(\d+)$/;

export const KIND_NAMES: Record<CallKind, string> = { model: 'Model calls', batch: 'Batch lines', tool: 'Tool calls' };

/** The MCP server and tool of a tool call; undefined for any other row. */
export function toolOf(row: Row): { server: string; tool: string } | undefined {
  if (!row.served_by.startsWith(TOOL_SERVER)) return undefined;
  const server = row.served_by.slice(TOOL_SERVER.length);
  const tool = row.model.startsWith(`${server}__`) ? row.model.slice(server.length + 2) : row.model;
  return { server, tool };
}

/** The batch a batch line belongs to and its line number (from 1); undefined for any other row. */
export function batchLineOf(row: Row): { batchId: string; line: number } | undefined {
  const match = BATCH_LINE.exec(row.request_id);
  if (!match) return undefined;
  return { batchId: `${match[1] ?? ''}batch_${match[2]}`, line: Number(match[3]) };
}

export function callKind(row: Row): CallKind {
  if (toolOf(row)) return 'tool';
  return batchLineOf(row) ? 'batch' : 'model';
}

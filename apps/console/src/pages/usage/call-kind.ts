import type { UsageGeneration } from '../../api/types';

/**
 * What a request log row is. The log lists model calls, batch lines and MCP tool calls alike; these are told apart by
 * what the API already says of them. A batch line's answered call is billed under the line's id
 * (`batch_req_…`, `msgbatch_req_…`), which is also its request id (docs/batches.md "Billed once"): only a batch's own
 * key gets that event id, whereas any caller may send a line-like `x-request-id`, so a row is a batch line only when
 * both ids are the line's. A tool call is served by `mcp:<server>` with `<server>__<tool>` as its model (docs/mcp.md).
 */
export type CallKind = 'model' | 'batch' | 'tool';

type Row = Pick<UsageGeneration, 'id' | 'model' | 'request_id' | 'served_by'>;

const TOOL_SERVER = 'mcp:';
/** A line id as the runs service makes it: its batch's kind and ULID, then the line's number (at most 100,000). */
const LINE_ID = /^(batch|msgbatch)_req_([0-9A-HJKMNP-TV-Z]{26})_([1-9][0-9]{0,5})$/;

export const KIND_NAMES: Record<CallKind, string> = { model: 'Model calls', batch: 'Batch lines', tool: 'Tool calls' };

/** The MCP server and tool of a tool call; undefined for any other row. */
export function toolOf(row: Row): { server: string; tool: string } | undefined {
  if (!row.served_by.startsWith(TOOL_SERVER)) return undefined;
  const server = row.served_by.slice(TOOL_SERVER.length);
  const tool = row.model.startsWith(`${server}__`) ? row.model.slice(server.length + 2) : row.model;
  return { server, tool };
}

/**
 * The batch a batch line belongs to and its line number (from 1); undefined for any other row, a call whose request
 * id only looks like a line id included. A line's attempts that were not answered (a 429 the lane tried again) have
 * event ids of their own, so they are not marked either.
 */
export function batchLineOf(row: Row): { batchId: string; line: number } | undefined {
  if (row.id !== row.request_id) return undefined;
  const match = LINE_ID.exec(row.request_id);
  if (!match) return undefined;
  return { batchId: `${match[1]}_${match[2]}`, line: Number(match[3]) };
}

export function callKind(row: Row): CallKind {
  if (toolOf(row)) return 'tool';
  return batchLineOf(row) ? 'batch' : 'model';
}

import { batchLineOf, callKind, toolOf } from './call-kind';

const row = (model: string, request_id: string, served_by: string, id = 'evt_01JABCDEF0123456789ABCDEFG') => ({
  id,
  model,
  request_id,
  served_by,
});
/** A batch line's answered call, as the ledger keeps it: billed under the line's id, which is its request id too. */
const answeredLine = (lineId: string) => row('house', lineId, 'house', lineId);

const ULID = '01JABCDEF0123456789ABCDEFG';

describe('what a request log row is', () => {
  it('a tool call: served by mcp:<server>, its model <server>__<tool>', () => {
    const call = row('everything__get-sum', 'req_1', 'mcp:everything');
    expect(callKind(call)).toBe('tool');
    expect(toolOf(call)).toEqual({ server: 'everything', tool: 'get-sum' });
    // A tool whose own name holds `__` keeps it whole: the server's slug never does.
    expect(toolOf(row('git-hub__list__issues', 'req_2', 'mcp:git-hub'))).toEqual({
      server: 'git-hub',
      tool: 'list__issues',
    });
  });

  it('a batch line: billed under its line id, which is its request id, and names its batch and line', () => {
    const line = answeredLine(`batch_req_${ULID}_12`);
    expect(callKind(line)).toBe('batch');
    expect(batchLineOf(line)).toEqual({ batchId: `batch_${ULID}`, line: 12 });
    expect(batchLineOf(answeredLine(`msgbatch_req_${ULID}_3`))).toEqual({ batchId: `msgbatch_${ULID}`, line: 3 });
  });

  it('a call that sent a line-like x-request-id is a model call: its event id is its own', () => {
    // Any key may send `x-request-id: batch_req_…`; only a batch's own key gets its answer billed under that id.
    const spoofed = row('house', `batch_req_${ULID}_12`, 'house', 'evt_01JXYZ0000000000000000000A');
    expect(callKind(spoofed)).toBe('model');
    expect(batchLineOf(spoofed)).toBeUndefined();
    expect(callKind(row('house', `msgbatch_req_${ULID}_1`, 'house'))).toBe('model');
  });

  it('anything else is a model call, an id only resembling a line id included', () => {
    expect(callKind(row('house', 'req_9', 'house'))).toBe('model');
    for (const id of [
      'batch_req_',
      `my-batch_req_${ULID}_2`,
      'batch_req_01JABC_3', // not a ULID
      `batch_req_${ULID}_0`, // lines count from 1
      `batch_req_${ULID}_1234567`, // more lines than a batch holds
      `batch_req_${ULID.toLowerCase()}_1`,
    ])
      expect(callKind(answeredLine(id))).toBe('model');
    expect(toolOf(row('house', 'req_9', 'house'))).toBeUndefined();
  });
});

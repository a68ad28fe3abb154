import { batchLineOf, callKind, toolOf } from './call-kind';

const row = (model: string, request_id: string, served_by: string) => ({ model, request_id, served_by });

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

  it('a batch line: its request id is the line id, which names its batch and line', () => {
    const line = row('house', 'batch_req_01JABCDEF0123456789ABCDEFG_12', 'house');
    expect(callKind(line)).toBe('batch');
    expect(batchLineOf(line)).toEqual({ batchId: 'batch_01JABCDEF0123456789ABCDEFG', line: 12 });
    expect(batchLineOf(row('house', 'msgbatch_req_01JABC_3', 'house'))).toEqual({
      batchId: 'msgbatch_01JABC',
      line: 3,
    });
  });

  it('anything else is a model call, a request id only resembling a line id included', () => {
    expect(callKind(row('house', 'req_9', 'house'))).toBe('model');
    expect(callKind(row('gpt-4o', 'batch_req_', 'provider:openai/east'))).toBe('model');
    expect(callKind(row('gpt-4o', 'my-batch_req_1_2', 'byo:mine'))).toBe('model');
    expect(toolOf(row('house', 'req_9', 'house'))).toBeUndefined();
  });
});

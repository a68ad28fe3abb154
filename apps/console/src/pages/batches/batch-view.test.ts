import { endpointOfFirstLine, errorMessages, isCancellable, isOpen, progressText } from './batch-view';

describe("the Batches page's reading of a batch", () => {
  it('counts lines answered either way out of all, naming the failed ones only when there are some', () => {
    expect(progressText({ total: 3, completed: 0, failed: 0 })).toBe('0 of 3 done');
    expect(progressText({ total: 1200, completed: 1100, failed: 100 })).toBe('1,200 of 1,200 done, 100 failed');
  });

  it('keeps reading a batch until it settles, and offers cancel only while lines may still start', () => {
    expect(
      ['validating', 'in_progress', 'finalizing', 'cancelling'].every((status) => isOpen({ status } as never)),
    ).toBe(true);
    expect(['completed', 'failed', 'expired', 'cancelled'].some((status) => isOpen({ status } as never))).toBe(false);
    expect(isCancellable({ status: 'in_progress' })).toBe(true);
    expect(isCancellable({ status: 'cancelling' })).toBe(false);
  });

  it("reads a failed batch's errors, with the line when one is named", () => {
    expect(
      errorMessages({ object: 'list', data: [{ code: 'invalid', message: 'url differs', line: 3 }, { message: 'x' }] }),
    ).toEqual(['line 3: url differs', 'x']);
    expect(errorMessages(null)).toEqual([]);
    expect(errorMessages({ data: 'nope' })).toEqual([]);
  });

  it("starts the create form on the endpoint of the file's first line", () => {
    const line = (url: string) => JSON.stringify({ custom_id: 'a', method: 'POST', url, body: {} });
    expect(endpointOfFirstLine(`\n${line('/v1/embeddings')}\n${line('/v1/embeddings')}`)).toBe('/v1/embeddings');
    expect(endpointOfFirstLine(`${line('/v1/responses')}\r\n{"custom_id": "b", "ur`)).toBe('/v1/responses');
    expect(endpointOfFirstLine(line('/v1/completions'))).toBeUndefined();
    expect(endpointOfFirstLine('{"custom_id": "cut off')).toBeUndefined();
    expect(endpointOfFirstLine('')).toBeUndefined();
  });
});

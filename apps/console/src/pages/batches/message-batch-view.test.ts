import { countsText, hasEnded, isCancellable, isProcessing, readRequests, whereOf } from './message-batch-view';

const counts = (processing: number, succeeded: number, errored = 0, canceled = 0, expired = 0) => ({
  processing,
  succeeded,
  errored,
  canceled,
  expired,
});
const request = (id: string) => ({ custom_id: id, params: { model: 'house', max_tokens: 8, messages: [] } });

describe("the Batches page's reading of a message batch", () => {
  it('counts requests with an outcome out of all, naming each outcome there is', () => {
    expect(countsText(counts(3, 0))).toBe('0 of 3 done');
    expect(countsText(counts(1, 2))).toBe('2 of 3 done: 2 succeeded');
    expect(countsText(counts(0, 1200, 3, 10, 1))).toBe(
      '1,214 of 1,214 done: 1,200 succeeded, 3 errored, 10 canceled, 1 expired',
    );
  });

  it('reads the list again while a batch processes; cancel before it ends, results and delete after', () => {
    expect([isProcessing, isCancellable, hasEnded].map((is) => is({ processing_status: 'in_progress' }))).toEqual([
      true,
      true,
      false,
    ]);
    expect([isProcessing, isCancellable, hasEnded].map((is) => is({ processing_status: 'canceling' }))).toEqual([
      true,
      false,
      false,
    ]);
    expect([isProcessing, isCancellable, hasEnded].map((is) => is({ processing_status: 'ended' }))).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('reads JSONL, one request a line, keeping the line each was on', () => {
    const text = `${JSON.stringify(request('a'))}\r\n\n  \n${JSON.stringify(request('b'))}\n`;
    expect(readRequests(text)).toEqual({ requests: [request('a'), request('b')], lines: [1, 4] });
    expect(readRequests(JSON.stringify(request('a')))).toEqual({ requests: [request('a')], lines: [1] });
    expect(readRequests(`\n${JSON.stringify(request('a'), null, 2)}`)).toEqual({
      requests: [request('a')],
      lines: [2],
    });
  });

  it('reads a JSON array of requests, or the create body itself', () => {
    const list = [request('a'), request('b')];
    expect(readRequests(JSON.stringify(list, null, 2))).toEqual({ requests: list });
    expect(readRequests(JSON.stringify({ requests: list }))).toEqual({ requests: list });
  });

  it('says what is wrong with input that is not requests, naming the line', () => {
    expect(readRequests('  \n')).toEqual({ problem: 'Paste the requests or choose a file of them.' });
    expect(readRequests('[]')).toEqual({ problem: 'The list holds no request.' });
    expect(readRequests('[{"custom_id": "a"}, 3]')).toEqual({
      problem: 'Request 2 is not an object of {"custom_id", "params"}.',
    });
    expect(readRequests(`${JSON.stringify(request('a'))}\n"b"`)).toEqual({
      problem: 'Line 2 is not an object of {"custom_id", "params"}.',
    });
    const cut = readRequests(`${JSON.stringify(request('a'))}\n\n{"custom_id": "b", "par`);
    expect('problem' in cut && cut.problem).toMatch(/^Line 3 is not JSON: /);
  });

  it("names where a refusal's problem is: the line for JSONL, else the request's place", () => {
    expect(whereOf('requests.1.custom_id', [1, 4])).toBe('line 4, custom_id');
    expect(whereOf('requests.0.params.max_tokens', undefined)).toBe('request 1, params.max_tokens');
    expect(whereOf('requests.2', undefined)).toBe('request 3');
    expect(whereOf('requests', [1])).toBeUndefined();
    expect(whereOf('body', undefined)).toBeUndefined();
  });
});

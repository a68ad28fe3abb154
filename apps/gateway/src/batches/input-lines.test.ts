import { InputLineChecker, lineProblem } from './input-lines';

const line = (customId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'house', messages: [{ role: 'user', content: 'hi' }] },
    ...extra,
  });

function check(...chunks: string[]): InputLineChecker {
  const checker = new InputLineChecker();
  for (const chunk of chunks) checker.feed(Buffer.from(chunk));
  checker.end();
  return checker;
}

describe('batch input lines', () => {
  it('a file of good lines, split anywhere across chunks, passes and counts its requests', () => {
    const text = `${line('a')}\n${line('b')}\r\n\n${line('c')}`;
    for (const cut of [1, 7, text.indexOf('\n'), text.indexOf('\n') + 1, text.length - 1]) {
      const checker = check(text.slice(0, cut), text.slice(cut));
      expect(checker.bad).toBeUndefined();
      expect(checker.requests).toBe(3);
    }
  });

  it('the first bad line is named by its number, blank lines counted', () => {
    const checker = check(`${line('a')}\n\n{"custom_id":"b"\n${line('c')}\n`);
    expect(checker.bad).toEqual({ line: 3, message: 'not valid JSON.' });
  });

  it('a custom_id used twice is refused on its second line', () => {
    expect(check(`${line('a')}\n${line('a')}\n`).bad).toEqual({
      line: 2,
      message: "custom_id 'a' is used by an earlier line.",
    });
  });

  it('an empty file holds no requests', () => {
    expect(check('\n\n').bad?.message).toBe('the file holds no requests.');
  });

  it.each([
    ['[1]', 'not a JSON object.'],
    [line(''), 'custom_id must be a non-empty string.'],
    [line('a', { method: 'GET' }), "method must be 'POST'."],
    [line('a', { url: '/v1/messages' }), 'url must be one of /v1/chat/completions, /v1/responses, /v1/embeddings.'],
    [line('a', { body: [] }), 'body must be a JSON object.'],
    [line('a', { body: { messages: [] } }), 'body.model must be a non-empty string.'],
  ])('%s is refused: %s', (text, message) => {
    expect(lineProblem(text)).toBe(message);
  });
});

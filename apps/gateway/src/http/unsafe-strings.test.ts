import { findUnsafeString } from './unsafe-strings';

describe('strings the ledger could not store', () => {
  it('finds a NUL in the model id', () => {
    expect(findUnsafeString(JSON.parse('{"model":"x\\u0000y","messages":[]}'))).toBe('model');
  });

  it('finds a lone surrogate deep in the messages, with its dotted path', () => {
    const body = JSON.parse(
      '{"model":"m","messages":[{"role":"user","content":"ok"},' +
        '{"role":"user","content":[{"type":"text","text":"a\\ud800b"}]}]}',
    );
    expect(findUnsafeString(body)).toBe('messages.1.content.0.text');
  });

  it('finds an unsafe object key, naming it without the character', () => {
    expect(findUnsafeString(JSON.parse('{"metadata":{"k\\u0000":"v"}}'))).toBe('metadata.k\uFFFD');
  });

  it('passes well-formed text, surrogate pairs and an escaped backslash before u0000', () => {
    expect(
      findUnsafeString(
        JSON.parse(
          '{"model":"m","messages":[{"content":"😀 \\ud83d\\ude00 \\\\u0000 ünïcode"}],"n":1,"b":true,"z":null}',
        ),
      ),
    ).toBeUndefined();
  });

  it('walks a deeply nested body without overflowing the stack', () => {
    let nested: unknown = 'a\u0000';
    for (let i = 0; i < 100_000; i++) nested = [nested];
    expect(findUnsafeString({ deep: nested })?.startsWith('deep.0.0')).toBe(true);
  });
});

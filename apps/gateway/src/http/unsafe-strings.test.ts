import { findUnsafeString, mayHoldUnsafeStrings } from './unsafe-strings';

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

  describe('the text check that lets the walk be skipped', () => {
    it('is false for a plain body, and true for each escape that can spell an unsafe string', () => {
      expect(mayHoldUnsafeStrings('{"model":"m","messages":[{"role":"user","content":"héllo 😀 \\n \\u00e9"}]}')).toBe(
        false,
      );
      for (const escape of ['\\u0000', '\\ud800', '\\uDBFF', '\\udc00', '\\uDFFF', '\\uD83D'])
        expect(mayHoldUnsafeStrings(`{"a":"x${escape}y"}`)).toBe(true);
      // Near misses: other escapes in the same ranges' neighbourhood spell safe characters.
      for (const escape of ['\\u0001', '\\ud7ff', '\\ue000', '\\u00d8'])
        expect(mayHoldUnsafeStrings(`{"a":"x${escape}y"}`)).toBe(false);
    });

    it('never says false of a text whose parsed strings hold a NUL or a lone surrogate (random bodies)', () => {
      // Code units the way callers' SDKs write them: plain, escaped by JSON.stringify, or escaped by hand in
      // upper case, in values and in keys.
      const units = ['a', 'é', '\u0000', '\ud800', '\udfff', '\ud83d\ude00', '\\', '"', 'u', '0'];
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed % n;
      };
      const text = () => Array.from({ length: 1 + random(6) }, () => units[random(units.length)]).join('');
      let unsafeSeen = 0;
      for (let i = 0; i < 5_000; i++) {
        let json = JSON.stringify({ [text()]: [text(), { k: text() }], model: text() });
        if (random(2) === 0)
          json = json.replace(/\\u(d[89a-f][0-9a-f]{2}|0000)/g, (_, hex: string) => `\\u${hex.toUpperCase()}`);
        const unsafe = findUnsafeString(JSON.parse(json)) !== undefined;
        if (unsafe) unsafeSeen++;
        if (unsafe) expect(mayHoldUnsafeStrings(json)).toBe(true);
      }
      expect(unsafeSeen).toBeGreaterThan(1_000);
    });
  });
});

import { decodeUtf8Body, exceedsJsonDepth, findHostileUrlPart, MAX_JSON_DEPTH } from './hostile-input';

describe('hostile input checks', () => {
  it('counts nesting outside strings only, so brackets inside a string never count', () => {
    expect(exceedsJsonDepth('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(exceedsJsonDepth('['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(
      true,
    );
    expect(exceedsJsonDepth(JSON.stringify({ a: '[[[[{{{{\\"[[[[' }), 2)).toBe(false);
    expect(exceedsJsonDepth('{"a":{"b":[{"c":1}]}}', 3)).toBe(true);
  });

  it('ends a string at a quote after an even run of backslashes, and skips one after an odd run', () => {
    // "x\\" ends after the escaped backslash, so the brackets after it count.
    expect(exceedsJsonDepth('["x\\\\",[[1]]]', 2)).toBe(true);
    // "x\\\"[[" goes on past the escaped quote, so its brackets do not.
    expect(exceedsJsonDepth('["x\\\\\\"[[[", 1]', 2)).toBe(false);
    expect(exceedsJsonDepth('["\\"', 0)).toBe(true);
    expect(exceedsJsonDepth('"never closed [[[[', 1)).toBe(false);
  });

  it('counts as a plain scan of every character does, on any text', () => {
    // The scan it replaced: one character at a time, a backslash in a string escaping the next one.
    const byCharacter = (text: string, max: number): boolean => {
      let depth = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '[' || c === '{') {
          if (++depth > max) return true;
        } else if (c === ']' || c === '}') depth--;
      }
      return false;
    };
    const alphabet = ['"', '\\', '[', ']', '{', '}', 'a', ','];
    let seed = 7;
    // A 32-bit linear congruential generator (its high bits: the low ones of such a generator cycle fast).
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16;
    const differing: Array<[string, number]> = [];
    for (let run = 0; run < 20_000; run++) {
      const text = Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]).join('');
      const max = next() % 5;
      if (exceedsJsonDepth(text, max) !== byCharacter(text, max)) differing.push([text, max]);
    }
    expect(differing).toEqual([]);
  });

  it('refuses bytes that are not UTF-8 and keeps every real character', () => {
    expect(() => decodeUtf8Body(Buffer.from([0x22, 0xff, 0x22]))).toThrow(
      expect.objectContaining({ code: 'invalid_request', param: 'body' }),
    );
    expect(() => decodeUtf8Body(Buffer.from([0xed, 0xa0, 0x80]))).toThrow();
    expect(decodeUtf8Body(Buffer.from('"héllo 漢字 😀"', 'utf8'))).toBe('"héllo 漢字 😀"');
  });

  it('names the path or the query parameter whose escapes are malformed, not UTF-8, or spell a NUL', () => {
    expect(findHostileUrlPart('/v1/teams/%ff')).toBe('path');
    expect(findHostileUrlPart('/v1/teams/%')).toBe('path');
    expect(findHostileUrlPart('/v1/x-builds/blocklist/%00')).toBe('path');
    expect(findHostileUrlPart('/v1/teams/%ed%a0%80')).toBe('path');
    expect(findHostileUrlPart('/v1/keys?limit=5&cursor=%e2%82')).toBe('query.cursor');
    expect(findHostileUrlPart('/v1/keys?cursor=a%00b')).toBe('query.cursor');
    expect(findHostileUrlPart('/v1/keys?%ff=1')).toBe('query');
  });

  it('lets well-formed Unicode through in path and query', () => {
    expect(findHostileUrlPart('/v1/aliases/caf%C3%A9')).toBeUndefined();
    expect(findHostileUrlPart('/v1/usage?q=%F0%9F%98%80+x&limit=10&flag')).toBeUndefined();
    expect(findHostileUrlPart('/v1/keys')).toBeUndefined();
  });
});

import { cutTemplate, fillTemplate, readTemplate, slotText } from './frame-template';

const chunk = (content: string, obfuscation = 'pad') => ({
  id: 'c1',
  choices: [{ index: 0, delta: { content } }],
  usage: null,
  obfuscation,
});
const template = () => {
  const value = chunk('x');
  return cutTemplate(value, [
    (text) => (value.choices[0]!.delta.content = text),
    (text) => (value.obfuscation = text),
  ])!;
};

describe('frame templates', () => {
  // Strings whose JSON.stringify encoding uses only the short escapes, or none.
  it.each(['', 'word ', 'say "hi"\\n', 'line\nbreak\ttab\r\b\f', 'é ü 中文 😀', '\u2028\u2029\u007f', '/path'])(
    'reads and refills %j exactly',
    (text) => {
      const data = JSON.stringify(chunk(text, 'Zq9'));
      const bodies = readTemplate(data, template())!;
      expect(slotText(bodies[0]!)).toBe(text);
      expect(slotText(bodies[1]!)).toBe('Zq9');
      expect(fillTemplate(template(), bodies)).toBe(data);
    },
  );

  it.each([
    ['a control character, written as \\u', JSON.stringify(chunk('\u0001'))],
    ['a lone surrogate, written as \\u', JSON.stringify(chunk('\ud800'))],
    ['an escaped slash', JSON.stringify(chunk('a')).replace('"a"', '"\\/"')],
    ['a \\u escape JSON.stringify would not write', JSON.stringify(chunk('a')).replace('"a"', '"\\u0061"')],
    ['a raw lone surrogate', JSON.stringify(chunk('a')).replace('"a"', '"\ud800"')],
    ['a space', JSON.stringify(chunk('a')).replace('"id":', '"id": ')],
    ['another field changed', JSON.stringify({ ...chunk('a'), id: 'c2' })],
    ['a quote closing the string early', JSON.stringify(chunk('a')).replace('"a"', '"a","model":"x"')],
    ['a backslash escaping the closing quote', JSON.stringify(chunk('a')).replace('"a"', '"a\\"')],
    ['trailing text', `${JSON.stringify(chunk('a'))} `],
    ['a cut-off frame', JSON.stringify(chunk('a')).slice(0, -3)],
  ])('does not read a frame with %s (the full parse does)', (_case, data) => {
    expect(readTemplate(data, template())).toBeUndefined();
  });

  it('does not cut a value in which a mark already appears', () => {
    const value = { a: '', b: '\u0000sbc-slot-0\u0000' };
    expect(cutTemplate(value, [(text) => (value.a = text)])).toBeUndefined();
  });
});

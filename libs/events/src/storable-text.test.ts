import { storableText } from './storable-text';

describe('storableText', () => {
  it('returns valid text unchanged, surrogate pairs included', () => {
    for (const text of ['', 'house', 'clé ünïcödé', '模型', '🚀 emoji 👩‍💻']) expect(storableText(text)).toBe(text);
  });

  it('drops NUL, which PostgreSQL text cannot hold', () => {
    expect(storableText('x\u0000y\u0000')).toBe('xy');
  });

  it('replaces lone surrogates (high or low, anywhere) with U+FFFD and keeps pairs next to them', () => {
    expect(storableText('a\uD800b')).toBe('a\uFFFDb');
    expect(storableText('\uDC00z')).toBe('\uFFFDz');
    expect(storableText('end\uDBFF')).toBe('end\uFFFD');
    expect(storableText('\uDC00\uD83D\uDE80\uD800')).toBe('\uFFFD🚀\uFFFD');
  });

  it('gives text whose UTF-8 round trip is itself', () => {
    const cleaned = storableText('m\u0000\uD800\uDFFF\uDFFF');
    expect(Buffer.from(cleaned, 'utf8').toString('utf8')).toBe(cleaned);
  });
});

import { countTextChars, estimateInputTokens, splitIntoPieces } from './tokens';

describe('token estimates', () => {
  it('counts about four characters of prompt text per input token, rounding up', () => {
    expect(estimateInputTokens([{ role: 'user', content: 'abcdefgh' }])).toBe(2);
    expect(estimateInputTokens([{ role: 'user', content: 'abcdefghi' }])).toBe(3);
    expect(estimateInputTokens([], undefined)).toBe(1);
  });

  it('ignores roles, ids and binary payloads when counting prompt text', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(10_000) } };
    expect(countTextChars([{ role: 'user', content: [{ type: 'text', text: 'hi' }, image] }])).toBe(2);
  });

  it('splits text into pieces that join back to the same text', () => {
    const text = '  leading space, then words\nand lines';
    expect(splitIntoPieces(text).join('')).toBe(text);
    expect(splitIntoPieces(text)).toHaveLength(6);
  });
});

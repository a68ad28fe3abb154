import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { parseMessagesRequest } from '@sbc/dialects';
import { countMessagesBody, countRequestTokens, createTokenCounter, EXACT_COUNT_CHARS } from './count-tokens';

const PROSE = 'The quick brown fox jumps over the lazy dog, then writes code: function f(x) { return x * 2; }\n';

function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

describe('local token counts', () => {
  it('ordinary text within the budget is counted exactly as the tokenizer counts it', () => {
    const text =
      PROSE.repeat(200) +
      'a short blob: ' +
      Buffer.alloc(150, 7).toString('base64') +
      ' and a URL https://example.com/a/b?c=d';
    expect(createTokenCounter()(text)).toBe(countTokens(text));
  });

  it('a long whitespace-free span (a base64 blob) is off by at most one token per 256 characters', () => {
    const blob = Buffer.from(Array.from({ length: 3_000 }, (_, i) => (i * 7919) % 256)).toString('base64');
    const counted = createTokenCounter()(blob);
    expect(Math.abs(counted - countTokens(blob))).toBeLessThanOrEqual(Math.ceil(blob.length / 256));
  });

  it('a long run without whitespace is counted in pieces: fast, and within one token per piece', () => {
    // The tokenizer alone takes seconds on 64,000 identical characters (its merge step is quadratic).
    const run = 'x'.repeat(64_000);
    const { value, ms } = timed(() => createTokenCounter()(run));
    expect(ms).toBeLessThan(1_000);
    // 'x' runs tokenize 8 characters a token: 8,000 tokens, and the 250 cuts may each cost at most one.
    expect(value).toBeGreaterThanOrEqual(8_000);
    expect(value).toBeLessThanOrEqual(8_000 + Math.ceil(64_000 / 256));
  });

  it('text past the budget is estimated at the rate measured on the counted part', () => {
    const text = PROSE.repeat(Math.ceil((3 * EXACT_COUNT_CHARS) / PROSE.length));
    const { value, ms } = timed(() => createTokenCounter()(text));
    const exact = countTokens(text);
    expect(Math.abs(value - exact) / exact).toBeLessThan(0.01);
    expect(ms).toBeLessThan(1_000);
  });

  it('one budget covers a whole request, however its text is split', () => {
    const count = createTokenCounter(PROSE.length * 5);
    expect(count(PROSE.repeat(5))).toBe(countTokens(PROSE.repeat(5)));
    // The budget is now spent: this is an estimate at the measured rate, not a count.
    const rate = countTokens(PROSE.repeat(5)) / PROSE.repeat(5).length;
    expect(count('y'.repeat(1_000))).toBe(Math.ceil(1_000 * rate));
  });

  it(
    'a request of many parts stays within the budget: a ' +
      'count_tokens body of 32 MB is answered in well under a second',
    () => {
      const messages = Array.from({ length: 400 }, (_, i) => ({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: 'z'.repeat(80_000),
      }));
      const { value, ms } = timed(() => countMessagesBody({ model: 'house', messages }));
      expect(value).toBeGreaterThan((400 * 80_000) / 256);
      expect(ms).toBeLessThan(1_000);
    },
  );

  it('counts framing, tools and content of a request', () => {
    const request = parseMessagesRequest({
      model: 'house',
      max_tokens: 10,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello there' }],
      tools: [
        {
          name: 'weather',
          description: 'Weather for a city',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
    });
    const withoutTools = countRequestTokens({ ...request, tools: [] });
    expect(withoutTools).toBeGreaterThan(countTokens('Hello there'));
    expect(countRequestTokens(request)).toBe(
      withoutTools +
        countTokens('weather') +
        countTokens('Weather for a city') +
        countTokens(JSON.stringify(request.tools![0]!.parameters)),
    );
  });
});

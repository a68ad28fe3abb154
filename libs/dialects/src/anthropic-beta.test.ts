import fc from 'fast-check';
import { parseBetaHeader, refusedBetas, shapeBetas } from './anthropic-beta';

const CLAUDE_CODE = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'context-management-2025-06-27',
  'mid-conversation-system-2026-04-07',
];

describe('parseBetaHeader', () => {
  it('splits on commas, trims, and drops empty values and repeats', () => {
    expect(parseBetaHeader(' a-1 ,b-2,,a-1 , c-3,')).toEqual(['a-1', 'b-2', 'c-3']);
    expect(parseBetaHeader('')).toEqual([]);
  });
});

describe('shapeBetas', () => {
  it('without a policy sends every value as the caller sent it', () => {
    expect(shapeBetas(CLAUDE_CODE, undefined)).toEqual(CLAUDE_CODE);
    expect(shapeBetas(CLAUDE_CODE, {})).toEqual(CLAUDE_CODE);
  });

  it('drops the values `drop` lists and maps the ones `map` names, keeping order', () => {
    const policy = {
      drop: ['claude-code-20250219'],
      map: { 'interleaved-thinking-2025-05-14': 'interleaved-thinking-2025-06-01' },
    };
    expect(shapeBetas(CLAUDE_CODE, policy)).toEqual([
      'interleaved-thinking-2025-06-01',
      'context-management-2025-06-27',
      'mid-conversation-system-2026-04-07',
    ]);
  });

  it('`*` in drop keeps only what map names: an allow-list', () => {
    const policy = { drop: ['*'], map: { 'context-management-2025-06-27': 'context-management-2025-06-27' } };
    expect(shapeBetas(CLAUDE_CODE, policy)).toEqual(['context-management-2025-06-27']);
  });

  it('leaves out values the target refuses, after mapping, and sends a value once when two map to it', () => {
    const policy = { map: { a: 'x', b: 'x' } };
    expect(shapeBetas(['a', 'b', 'c', 'd'], policy, (value) => value === 'd')).toEqual(['x', 'c']);
  });

  it('never sends a value the caller did not send or the map does not produce', () => {
    const value = fc.stringMatching(/^[a-z0-9-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 8 }),
        fc.array(value, { maxLength: 4 }),
        fc.dictionary(value, value, { maxKeys: 4 }),
        (values, drop, map) => {
          const shaped = shapeBetas(values, { drop, map });
          const possible = new Set([...values, ...Object.values(map)]);
          expect(shaped.every((sent) => possible.has(sent))).toBe(true);
          expect(new Set(shaped).size).toBe(shaped.length);
        },
      ),
    );
  });
});

describe('refusedBetas', () => {
  const sent = ['claude-code-20250219', 'prompt-caching-scope-2026-01-05', 'effort-2025-11-24'];

  it("reads the values Anthropic's and Vertex's wording names", () => {
    const message =
      'Unexpected value(s) `prompt-caching-scope-2026-01-05`, `effort-2025-11-24` for the `anthropic-beta` header. ' +
      'See the docs.';
    expect(refusedBetas(message, sent)).toEqual(['prompt-caching-scope-2026-01-05', 'effort-2025-11-24']);
  });

  it('takes a refusal that names no value (Bedrock: "invalid beta flag") as refusing every value sent', () => {
    expect(refusedBetas('invalid beta flag', sent)).toEqual(sent);
    expect(refusedBetas('The model returned the following errors: invalid beta flag', sent)).toEqual(sent);
  });

  it('is not fooled by other 400s, nor by a value that is part of a longer one', () => {
    expect(refusedBetas('max_tokens: must be at most 8192', sent)).toEqual([]);
    expect(refusedBetas('messages.1.role: Unexpected role "system"', sent)).toEqual([]);
    expect(refusedBetas('The `effort-2025-11-24` beta needs output_config.effort to be set', sent)).toEqual([]);
    expect(refusedBetas('Unexpected value(s) `effort-2025-11-24x` for the `anthropic-beta` header.', sent)).toEqual([]);
    expect(refusedBetas('invalid beta flag', [])).toEqual([]);
  });
});

import { modelAllowed } from './model-glob';

describe('allowed models', () => {
  it('a key without an allow-list may name every model', () => {
    expect(modelAllowed(undefined, 'gpt-6-astra')).toBe(true);
    expect(modelAllowed(null, 'house')).toBe(true);
  });

  it('an empty allow-list allows nothing', () => {
    expect(modelAllowed([], 'house')).toBe(false);
  });

  it('a plain name allows exactly that model, case-sensitively', () => {
    expect(modelAllowed(['house'], 'house')).toBe(true);
    expect(modelAllowed(['house'], 'house-fast')).toBe(false);
    expect(modelAllowed(['house'], 'House')).toBe(false);
    expect(modelAllowed(['claude-opus-5-5'], 'claude-opus-5')).toBe(false);
  });

  it('* matches any run of characters, including none and including /', () => {
    expect(modelAllowed(['claude-*'], 'claude-opus-5-5')).toBe(true);
    expect(modelAllowed(['claude-*'], 'claude-')).toBe(true);
    expect(modelAllowed(['claude-*'], 'gpt-6-sol')).toBe(false);
    expect(modelAllowed(['my-vllm/*'], 'my-vllm/qwen/qwen3-coder')).toBe(true);
    expect(modelAllowed(['*/llama-*'], 'lab/meta/llama-4')).toBe(true);
    expect(modelAllowed(['*'], '')).toBe(true);
    expect(modelAllowed(['**'], 'anything/at/all')).toBe(true);
  });

  it('? matches exactly one character', () => {
    expect(modelAllowed(['gpt-6.?-sol'], 'gpt-6.1-sol')).toBe(true);
    expect(modelAllowed(['gpt-6.?-sol'], 'gpt-6.12-sol')).toBe(false);
    expect(modelAllowed(['gpt-6.?-sol'], 'gpt-6.-sol')).toBe(false);
    expect(modelAllowed(['house-????'], 'house-fast')).toBe(true);
    expect(modelAllowed(['house-????'], 'house-omni-x')).toBe(false);
  });

  it('? counts a character, not a UTF-16 unit, so one emoji is one character', () => {
    expect(modelAllowed(['m-?'], 'm-🚀')).toBe(true);
    expect(modelAllowed(['m-??'], 'm-🚀')).toBe(false);
  });

  it('regular-expression characters in a glob match themselves', () => {
    expect(modelAllowed(['gpt-6.1-sol'], 'gpt-6x1-sol')).toBe(false);
    expect(modelAllowed(['a+b(c)[d]{e}|^$\\'], 'a+b(c)[d]{e}|^$\\')).toBe(true);
    expect(modelAllowed(['a+*'], 'aaa')).toBe(false);
  });

  it('a glob must match the whole name, not a part of it', () => {
    expect(modelAllowed(['sol'], 'gpt-6-sol')).toBe(false);
    expect(modelAllowed(['*sol'], 'gpt-6-sol-fast')).toBe(false);
    expect(modelAllowed(['*sol*'], 'gpt-6-sol-fast')).toBe(true);
  });

  it('a model allowed by any one glob of the list is allowed', () => {
    const globs = ['house*', 'claude-sonnet-*', 'gpt-6-luna'];
    expect(modelAllowed(globs, 'house-omni')).toBe(true);
    expect(modelAllowed(globs, 'claude-sonnet-5-5')).toBe(true);
    expect(modelAllowed(globs, 'gpt-6-luna')).toBe(true);
    expect(modelAllowed(globs, 'claude-opus-5-5')).toBe(false);
  });

  it('backtracks correctly when an early * would take too little or too much', () => {
    expect(modelAllowed(['*a*b'], 'xaxbxab')).toBe(true);
    expect(modelAllowed(['*a*b'], 'xaxbxa')).toBe(false);
    expect(modelAllowed(['a*b*c'], 'abcbc')).toBe(true);
    expect(modelAllowed(['a*?c'], 'ac')).toBe(false);
  });

  it('a hostile glob and name cannot stall the caller (no exponential backtracking)', () => {
    const glob = `${'*a'.repeat(30)}*b`;
    const name = 'a'.repeat(5_000);
    const started = performance.now();
    expect(modelAllowed([glob], name)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('answers the same for the same list whether or not it was seen before (compiled lists are cached)', () => {
    const globs = ['claude-*'];
    expect(modelAllowed(globs, 'claude-haiku-4-5')).toBe(true);
    expect(modelAllowed(globs, 'gpt-6-sol')).toBe(false);
    expect(modelAllowed([...globs], 'claude-haiku-4-5')).toBe(true);
    expect(modelAllowed(['gpt-*'], 'gpt-6-sol')).toBe(true);
  });
});

import { firstFreeSlug, slugBase } from './upstream-slug';
import { UPSTREAM_SLUG_PATTERN } from './upstreams';

describe('slugs derived from labels', () => {
  it.each([
    ['My vLLM box', 'my-vllm-box'],
    ['Custom', 'custom'],
    ['  Ollama (local) ', 'ollama-local'],
    ['Café Noël', 'cafe-noel'],
    ['--x--', 'x'],
    ['🚀', 'endpoint'],
    ['', 'endpoint'],
  ])('%j → %s', (label, slug) => {
    expect(slugBase(label)).toBe(slug);
  });

  it('a long label is cut to leave room for a suffix, and stays a valid slug', () => {
    const slug = firstFreeSlug(slugBase(`${'a'.repeat(39)} ${'b'.repeat(30)}`), new Set());
    expect(slug).toBe('a'.repeat(39));
    expect(UPSTREAM_SLUG_PATTERN.test(`${slugBase('x'.repeat(100))}-999`)).toBe(true);
  });

  it('a taken slug gets the first free numeric suffix', () => {
    expect(firstFreeSlug('custom', new Set())).toBe('custom');
    expect(firstFreeSlug('custom', new Set(['custom']))).toBe('custom-2');
    expect(firstFreeSlug('custom', new Set(['custom', 'custom-2', 'custom-4']))).toBe('custom-3');
  });
});

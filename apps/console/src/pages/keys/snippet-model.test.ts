import { snippetModel } from './snippet-model';

describe('snippetModel', () => {
  it('names the key’s first allowed model that is not a pattern, else house', () => {
    expect(snippetModel(undefined)).toBe('house');
    expect(snippetModel(null)).toBe('house');
    expect(snippetModel([])).toBe('house');
    expect(snippetModel(['house*', 'my-endpoint/gpt-6', 'house-omni'])).toBe('my-endpoint/gpt-6');
    expect(snippetModel(['claude-?', 'gpt-[45]'])).toBe('house');
  });
});

import { callerDialect } from './dialect-registry';
import { checkFallbackModels, fallbackModelsOf, MAX_FALLBACK_MODELS } from './fallback-models';

describe('fallback models (`models`)', () => {
  it('accepts a list of model ids and reads it back in order', () => {
    const body = { models: ['gpt-4o-mini', 'house'] };
    expect(checkFallbackModels(body)).toEqual([]);
    expect(fallbackModelsOf(body)).toEqual(['gpt-4o-mini', 'house']);
    expect(fallbackModelsOf({})).toEqual([]);
  });

  it.each([
    ['not an array', 'house', 'models'],
    ['empty', [], 'models'],
    ['too long', Array.from({ length: MAX_FALLBACK_MODELS + 1 }, () => 'house'), 'models'],
    ['an empty id', ['house', ''], 'models.1'],
    ['a non-string id', [42], 'models.0'],
  ])('refuses a list that is %s, naming the field', (_, models, path) => {
    expect(checkFallbackModels({ models })[0]?.path).toBe(path);
  });

  it.each(['chat', 'responses', 'messages'] as const)('is checked by the %s dialect', (name) => {
    const issues = callerDialect(name).check({ model: 'm', max_tokens: 1, messages: [], input: 'x', models: [] });
    expect(issues.map((issue) => issue.path)).toContain('models');
  });

  it.each(['chat', 'messages'] as const)('is never passed through to a %s upstream', (name) => {
    const passthrough = callerDialect(name).passthrough!;
    const body = { model: 'm', max_tokens: 1, messages: [], models: ['house'] };
    expect(passthrough.request(body, { model: 'engine', stream: false })).not.toHaveProperty('models');
    expect(body.models).toEqual(['house']);
  });
});

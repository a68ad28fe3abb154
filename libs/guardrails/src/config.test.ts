import { checkGuardrailConfig } from './config';

describe('a judge guardrail’s settings', () => {
  it('take the house model and the bounds’ defaults when left out', () => {
    expect(checkGuardrailConfig('judge', { question: '  Is it about the launch?  ' })).toEqual({
      config: {
        model: 'house',
        question: 'Is it about the launch?',
        max_tokens: 64,
        timeout_ms: 5_000,
        fail: 'closed',
      },
      issues: [],
    });
  });

  it('name every field out of bounds at once', () => {
    const checked = checkGuardrailConfig('judge', {
      model: '',
      question: '',
      max_tokens: 0,
      timeout_ms: 60_000,
      fail: 'x',
    });
    expect('issues' in checked && checked.issues.map((issue) => issue.path)).toEqual([
      'model',
      'question',
      'max_tokens',
      'timeout_ms',
      'fail',
    ]);
  });
});

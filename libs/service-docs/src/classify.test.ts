import {
  classifySegment,
  guessScalar,
  isEnumWord,
  isSafeName,
  mayEnumerate,
  singular,
  splitExtension,
  stringFormat,
} from './classify';

describe('path segment kinds', () => {
  it.each([
    ['42', 'integer'],
    ['v1', 'version'],
    ['v2beta1', 'version'],
    ['v1.1', 'version'],
    ['api', 'version'],
    ['2026-03-02', 'date'],
    ['3f2b8c1e-6d4a-4f7b-9e2c-5a1d0b8f7e6c', 'uuid'],
    ['jane.doe@example.com', 'email'],
    ['cus_Q8cLw2sT5vN1xA', 'id'],
    ['PP104522871DE', 'id'],
    ['T0001', 'id'],
    ['0a1b2c3d4e5f60718293a4b5c6d7e8f901234567', 'id'],
    ['QWxhZGRpbkZvb0Jhcg', 'id'],
    ['hello', 'slug'],
    ['spoon-knife', 'slug'],
    ['rate_limit', 'slug'],
    ['oauth2', 'slug'],
    ['a b', 'string'],
    ['key=value', 'string'],
  ])('%s reads as %s', (segment, kind) => {
    expect(classifySegment(segment, 1)).toBe(kind);
  });

  it('a date in the first segment is an API version, anywhere else a value', () => {
    expect(classifySegment('2010-04-01', 0)).toBe('version');
    expect(classifySegment('2010-04-01', 2)).toBe('date');
  });

  it('a known extension is split off so an id keeps its suffix', () => {
    expect(splitExtension('SM12ab34cd.json')).toEqual({ base: 'SM12ab34cd', ext: '.json' });
    expect(splitExtension('.json')).toEqual({ base: '.json', ext: '' });
    expect(splitExtension('issues')).toEqual({ base: 'issues', ext: '' });
  });
});

describe('printable names', () => {
  it('word-like names are printable; ids, emails and tokens used as keys are not', () => {
    expect(['per_page', 'x-ratelimit-limit', 'expand[]', 'created_at', 'v1'].every(isSafeName)).toBe(true);
    expect(
      ['cus_Q8cLw2sT5vN1xA', 'jane@example.com', '12345', 'a b', '3f2b8c1e-6d4a-4f7b-9e2c-5a1d0b8f7e6c'].some(
        isSafeName,
      ),
    ).toBe(false);
  });
});

describe('the enum rule', () => {
  it('only category-named fields without a secret ancestor may carry an enum', () => {
    expect(mayEnumerate(['state'])).toBe(true);
    expect(mayEnumerate(['data', 'status'])).toBe(true);
    for (const path of [
      ['password'],
      ['api_key'],
      ['auth', 'type'],
      ['session', 'mode'],
      ['email'],
      ['user_id'],
      ['name'],
      ['full_name'],
      ['customerId'],
      ['metadata', '*'],
      ['title'],
      [],
    ]) {
      expect({ path, allowed: mayEnumerate(path) }).toEqual({ path, allowed: false });
    }
  });

  it('only short lowercase words can be enum values', () => {
    expect(['open', 'requires_payment_method', 'chat.completion', 'in-transit'].every(isEnumWord)).toBe(true);
    expect(
      ['Open', 'a1', '42', 'jane@example.com', 'sk_live_abc123', 'x'.repeat(33), 'two words', ''].some(isEnumWord),
    ).toBe(false);
  });
});

describe('string formats and scalar guesses', () => {
  it.each([
    ['2026-01-12T09:14:03Z', 'date-time'],
    ['2026-03-02T15:00:00.250+01:00', 'date-time'],
    ['2026-03-02', 'date'],
    ['3f2b8c1e-6d4a-4f7b-9e2c-5a1d0b8f7e6c', 'uuid'],
    ['ops@widgetco.example', 'email'],
    ['https://octo.example/octo/hello', 'uri'],
    ['2026-01-12 09:14', undefined],
    ["email:'jane@example.com'", undefined],
    ['/v1/customers', undefined],
  ])('%s has format %s', (value, format) => {
    expect(stringFormat(value)).toBe(format);
  });

  it('wire strings read as their likely JSON types', () => {
    expect(guessScalar('42')).toEqual({ type: 'integer', value: 42 });
    expect(guessScalar('-3')).toEqual({ type: 'integer', value: -3 });
    expect(guessScalar('6.90')).toEqual({ type: 'number', value: 6.9 });
    expect(guessScalar('true')).toEqual({ type: 'boolean', value: true });
    // A leading zero is a code (a postcode), not a number.
    expect(guessScalar('01067')).toEqual({ type: 'string', value: '01067' });
  });

  it('collections name their members', () => {
    expect(['repos', 'issues', 'repositories', 'statuses', 'addresses', 'invoices', 'status'].map(singular)).toEqual([
      'repo',
      'issue',
      'repository',
      'status',
      'address',
      'invoice',
      'status',
    ]);
  });
});

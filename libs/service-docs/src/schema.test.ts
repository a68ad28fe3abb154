import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { emptyShape, mergeShape, observe, renderShape } from './schema';

/** The schema of a list of JSON values, one per observation. */
function schemaOf(values: readonly unknown[]) {
  const shape = emptyShape();
  for (const value of values) observe(shape, value);
  return renderShape(shape);
}

const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true }));

/** The learned schema accepts every value it was learned from. */
function expectAccepts(values: unknown[]) {
  const validate = ajv.compile(schemaOf(values));
  for (const value of values)
    expect({ value, ok: validate(value), errors: validate.errors ?? null }).toEqual({ value, ok: true, errors: null });
}

describe('body schemas', () => {
  it('required = present in every observation; a null still counts as present', () => {
    expect(
      schemaOf([
        { a: 1, b: 'x', c: null },
        { a: 2, c: 'y' },
      ]),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'string' }, c: { type: ['string', 'null'] } },
      required: ['a', 'c'],
    });
  });

  it('integers beside fractions widen to number', () => {
    expect(schemaOf([{ amount: 4 }, { amount: 6.9 }])).toEqual({
      type: 'object',
      properties: { amount: { type: 'number' } },
      required: ['amount'],
    });
  });

  it('mixed scalar types across observations become a type array', () => {
    expect(schemaOf([1, 'one', true, null])).toEqual({ type: ['boolean', 'integer', 'string', 'null'] });
  });

  it('objects or arrays mixed with other types become anyOf', () => {
    const schema = schemaOf([{ id: 1 }, 'ref_abc', [1, 2], null]);
    expect(schema).toEqual({
      anyOf: [
        { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        { type: 'array', items: { type: 'integer' } },
        { type: 'string' },
        { type: 'null' },
      ],
    });
    expectAccepts([{ id: 1 }, 'ref_abc', [1, 2], null]);
  });

  it('array items merge across every element and every observation', () => {
    expect(schemaOf([[{ a: 1 }, { a: 2, b: true }], [], [{ a: 'x' }]])).toEqual({
      type: 'array',
      items: {
        type: 'object',
        properties: { a: { type: ['integer', 'string'] }, b: { type: 'boolean' } },
        required: ['a'],
      },
    });
    expect(schemaOf([[]])).toEqual({ type: 'array', items: {} });
  });

  it('formats are declared only when every string had the same one', () => {
    const at = (values: string[]) => schemaOf(values);
    expect(at(['2026-01-12T09:14:03Z', '2026-03-02T15:00:00+01:00'])).toEqual({ type: 'string', format: 'date-time' });
    expect(at(['2026-03-02'])).toEqual({ type: 'string', format: 'date' });
    expect(at(['3f2b8c1e-6d4a-4f7b-9e2c-5a1d0b8f7e6c'])).toEqual({ type: 'string', format: 'uuid' });
    expect(at(['https://octo.example/a'])).toEqual({ type: 'string', format: 'uri' });
    expect(at(['ops@widgetco.example'])).toEqual({ type: 'string', format: 'email' });
    expect(at(['2026-03-02', '2026-01-12T09:14:03Z'])).toEqual({ type: 'string' });
  });

  it('objects keyed by ids or emails are maps: their keys are never printed', () => {
    const values = [
      { usage: { cus_Q8cLw2sT5vN1xA: { calls: 3 }, 'jane@example.com': { calls: 1 } } },
      { usage: { plan: { calls: 2 } } },
    ];
    const schema = schemaOf(values);
    expect(schema).toEqual({
      type: 'object',
      properties: {
        usage: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { calls: { type: 'integer' } }, required: ['calls'] },
        },
      },
      required: ['usage'],
    });
    expect(JSON.stringify(schema)).not.toMatch(/cus_|jane/);
    expectAccepts(values);
  });

  it('merging shapes equals observing everything in one shape, maps included', () => {
    const left = [
      { a: 1, m: { plan: 1 } },
      { a: 'x', m: { plan: 2 } },
    ];
    const right = [{ b: [1.5], m: { cus_Q8cLw2sT5vN1xA: 3 } }];
    const merged = emptyShape();
    const l = emptyShape();
    const r = emptyShape();
    left.forEach((v) => observe(l, v));
    right.forEach((v) => observe(r, v));
    mergeShape(merged, l);
    mergeShape(merged, r);
    expect(renderShape(merged)).toEqual(schemaOf([...left, ...right]));
  });
});

describe('enums', () => {
  it('a category field with few repeating lowercase words gets an enum', () => {
    expect(schemaOf([{ state: 'open' }, { state: 'closed' }, { state: 'open' }])).toMatchObject({
      properties: { state: { type: 'string', enum: ['closed', 'open'] } },
    });
  });

  it('a nullable category lists null among its values so null still validates', () => {
    const values = [{ reason: 'completed' }, { reason: null }, { reason: 'completed' }, { reason: 'reopened' }];
    expect(schemaOf(values)).toMatchObject({
      properties: { reason: { type: ['string', 'null'], enum: ['completed', 'reopened', null] } },
    });
    expectAccepts(values);
  });

  it(
    'no enum without evidence: too few observations, no ' + 'repeats, too many values, or values that are not words',
    () => {
      expect(schemaOf([{ state: 'open' }, { state: 'open' }]).properties).toEqual({ state: { type: 'string' } });
      expect(schemaOf([{ kind: 'a' }, { kind: 'b' }, { kind: 'c' }]).properties).toEqual({ kind: { type: 'string' } });
      const many = 'abcdefghij'.split('').flatMap((c) => [{ kind: c.repeat(3) }, { kind: c.repeat(3) }]);
      expect(schemaOf(many).properties).toEqual({ kind: { type: 'string' } });
      expect(schemaOf([{ plan: 'v2' }, { plan: 'v2' }, { plan: 'v2' }]).properties).toEqual({
        plan: { type: 'string' },
      });
    },
  );

  it('never an enum in a secret-bearing, identifying or user-data field', () => {
    for (const field of ['password', 'session_token', 'api_key', 'email', 'username', 'owner_id', 'name', 'title']) {
      const values = [{ [field]: 'hunter' }, { [field]: 'hunter' }, { [field]: 'hunter' }];
      expect(schemaOf(values).properties).toEqual({ [field]: { type: 'string' } });
    }
    const nested = [{ auth: { mode: 'live' } }, { auth: { mode: 'live' } }, { auth: { mode: 'live' } }];
    expect(JSON.stringify(schemaOf(nested))).not.toContain('live');
    const metadata = [{ metadata: { tier: 'gold' } }, { metadata: { tier: 'gold' } }, { metadata: { tier: 'gold' } }];
    expect(JSON.stringify(schemaOf(metadata))).not.toContain('gold');
  });

  it('an enum is dropped when the field also holds numbers or booleans', () => {
    expect(schemaOf([{ mode: 'auto' }, { mode: 'auto' }, { mode: 'auto' }, { mode: 3 }]).properties).toEqual({
      mode: { type: ['integer', 'string'] },
    });
  });
});

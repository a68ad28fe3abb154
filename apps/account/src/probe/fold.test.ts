import { foldProbe } from './fold';

const at = new Date('2026-09-23T10:00:00.000Z');

describe('folding a probe into an endpoint', () => {
  it('an answered probe lists what the endpoint lists, then the models named by hand, names filled in', () => {
    const fold = foldProbe(
      { ok: true, dialect: 'anthropic', models: ['a', 'b'], modelNames: { a: 'A', b: 'B' }, at },
      { models: ['manual', 'a'], modelNames: { b: 'My B' } },
      ['manual', 'a'],
    );
    expect(fold).toEqual({
      probe: { ok: true, models_found: 2, dialect: 'anthropic', at: '2026-09-23T10:00:00.000Z' },
      models: ['a', 'b', 'manual'],
      modelNames: { a: 'A', b: 'My B' },
    });
  });

  it('a failed probe keeps the models, the names and the dialect last answered in, and reports why', () => {
    const fold = foldProbe(
      { ok: false, models: [], modelNames: {}, error: 'connection refused by h:1', at },
      { models: ['x'], modelNames: { x: 'X' }, lastAnsweredIn: 'anthropic' },
      [],
    );
    expect(fold).toEqual({
      probe: { ok: false, error: 'connection refused by h:1', dialect: 'anthropic', at: '2026-09-23T10:00:00.000Z' },
      models: ['x'],
      modelNames: { x: 'X' },
    });
  });
});

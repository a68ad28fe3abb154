import { cacheKeyOf, canonicalJson, type CacheKeyInput } from './canonical-key';

const base: CacheKeyInput = {
  scope: { kind: 'account', id: 'usr_a' },
  dialect: 'chat',
  targetModels: ['house=sim-fast'],
  body: { model: 'house-fast', messages: [{ role: 'user', content: 'Hi' }], temperature: 0 },
};

describe('canonicalJson', () => {
  it('sorts every object key at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it('leaves out fields holding undefined and writes undefined array items as null, as JSON.stringify does', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe(JSON.stringify({ b: [null, 1] }));
  });
});

describe('cacheKeyOf', () => {
  it('is the same for the same request whatever its field order', () => {
    const reordered = { temperature: 0, messages: [{ content: 'Hi', role: 'user' }], model: 'house-fast' };
    expect(cacheKeyOf({ ...base, body: reordered })).toBe(cacheKeyOf(base));
  });

  it('ignores stream, stream_options, user and metadata', () => {
    const body = {
      ...base.body,
      stream: true,
      stream_options: { include_usage: true },
      user: 'u1',
      metadata: { a: '1' },
    };
    expect(cacheKeyOf({ ...base, body })).toBe(cacheKeyOf(base));
  });

  it('differs for any other change of the request', () => {
    expect(cacheKeyOf({ ...base, body: { ...base.body, temperature: 1 } })).not.toBe(cacheKeyOf(base));
    expect(cacheKeyOf({ ...base, body: { ...base.body, messages: [{ role: 'user', content: 'Hi!' }] } })).not.toBe(
      cacheKeyOf(base),
    );
  });

  it('is never shared across accounts, nor between an account and a team', () => {
    const keys = new Set([
      cacheKeyOf(base),
      cacheKeyOf({ ...base, scope: { kind: 'account', id: 'usr_b' } }),
      cacheKeyOf({ ...base, scope: { kind: 'team', id: 'usr_a' } }),
    ]);
    expect(keys.size).toBe(3);
  });

  it('differs by dialect and by target model, not by the order the targets came in', () => {
    expect(cacheKeyOf({ ...base, dialect: 'responses' })).not.toBe(cacheKeyOf(base));
    expect(cacheKeyOf({ ...base, targetModels: ['house=sim-smart'] })).not.toBe(cacheKeyOf(base));
    const two = { ...base, targetModels: ['byo:a=m', 'byo:b=m'] };
    expect(cacheKeyOf({ ...two, targetModels: ['byo:b=m', 'byo:a=m'] })).toBe(cacheKeyOf(two));
  });

  it('names the scope in clear and holds nothing of the prompt', () => {
    const key = cacheKeyOf({ ...base, scope: { kind: 'team', id: 'org_1' } });
    expect(key.startsWith('team:org_1:')).toBe(true);
    expect(key).not.toContain('Hi');
  });
});

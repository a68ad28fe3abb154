import * as exported from './index';

// The constants; the one function exported beside them (storableText) is not a name.
const names = Object.fromEntries(Object.entries(exported).filter(([, value]) => typeof value === 'string'));

describe('cross-service channel and topic names', () => {
  it('every name follows <domain>.<event>.v<n>, so versions are explicit when a payload changes', () => {
    for (const [constant, name] of Object.entries(names)) {
      expect({ constant, name }).toEqual({
        constant,
        name: expect.stringMatching(/^[a-z]+(-[a-z]+)*\.[a-z]+(-[a-z]+)*\.v[1-9]\d*$/),
      });
    }
  });

  it('no two constants share a name', () => {
    const values = Object.values(names);
    expect(new Set(values).size).toBe(values.length);
  });
});

import { planRead } from './media';

const meta = { etag: '"abc"', size: 1000 };

describe('planRead: what a media request gets', () => {
  it('the whole file without a range, and nothing when the caller already holds its ETag (weak or *, too)', () => {
    expect(planRead(meta, {})).toEqual({ kind: 'full' });
    expect(planRead(meta, { ifNoneMatch: ['"old"', '"abc"'] })).toEqual({ kind: 'not_modified' });
    expect(planRead(meta, { ifNoneMatch: ['W/"abc"'] })).toEqual({ kind: 'not_modified' });
    expect(planRead(meta, { ifNoneMatch: ['*'] })).toEqual({ kind: 'not_modified' });
    expect(planRead(meta, { ifNoneMatch: ['"old"'] })).toEqual({ kind: 'full' });
  });

  it('a range from start to end inclusive, cut at the end of the file; open-ended to the last byte', () => {
    expect(planRead(meta, { range: { start: 0, end: 99 } })).toEqual({ kind: 'range', start: 0, end: 99 });
    expect(planRead(meta, { range: { start: 900, end: 5000 } })).toEqual({ kind: 'range', start: 900, end: 999 });
    expect(planRead(meta, { range: { start: 999 } })).toEqual({ kind: 'range', start: 999, end: 999 });
  });

  it('a suffix range is the last bytes, the whole file when longer than it', () => {
    expect(planRead(meta, { range: { suffixLength: 10 } })).toEqual({ kind: 'range', start: 990, end: 999 });
    expect(planRead(meta, { range: { suffixLength: 5000 } })).toEqual({ kind: 'range', start: 0, end: 999 });
  });

  it('cannot serve a range starting past the end, an empty suffix, or any range of an empty file', () => {
    expect(planRead(meta, { range: { start: 1000 } })).toEqual({ kind: 'unsatisfiable' });
    expect(planRead(meta, { range: { suffixLength: 0 } })).toEqual({ kind: 'unsatisfiable' });
    expect(planRead({ etag: '"e"', size: 0 }, { range: { start: 0 } })).toEqual({ kind: 'unsatisfiable' });
  });

  it('If-Range with another ETag (or a weak one) asks for the whole file; with the current one, the range', () => {
    expect(planRead(meta, { range: { start: 0, end: 9 }, ifRange: '"old"' })).toEqual({ kind: 'full' });
    expect(planRead(meta, { range: { start: 0, end: 9 }, ifRange: 'W/"abc"' })).toEqual({ kind: 'full' });
    expect(planRead(meta, { range: { start: 0, end: 9 }, ifRange: '"abc"' })).toEqual({
      kind: 'range',
      start: 0,
      end: 9,
    });
  });
});

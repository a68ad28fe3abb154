import { entityTags, parseRange } from './x-builds-media';

describe('media requests at the edge', () => {
  it('reads the one byte range a Range header asks for: closed, open-ended or a suffix', () => {
    expect(parseRange('bytes=0-499')).toEqual({ start: 0, end: 499 });
    expect(parseRange('bytes=500-')).toEqual({ start: 500 });
    expect(parseRange('bytes=-200')).toEqual({ suffixLength: 200 });
    expect(parseRange(' Bytes = 1 - 1 ')).toEqual({ start: 1, end: 1 });
  });

  it('serves the whole file for no header, another unit, several ranges or a malformed one', () => {
    for (const header of [
      undefined,
      '',
      'items=0-1',
      'bytes=0-1,4-5',
      'bytes=-',
      'bytes=5-1',
      'bytes=a-b',
      'bytes 0-1',
    ]) {
      expect(parseRange(header)).toBeUndefined();
    }
  });

  it('lists the tags of If-None-Match, weak ones and * included', () => {
    expect(entityTags('"a", W/"b" ,*')).toEqual(['"a"', 'W/"b"', '*']);
    expect(entityTags(undefined)).toEqual([]);
  });
});

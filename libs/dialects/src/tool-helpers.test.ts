import { parseDataUrl } from './data-url';
import { parseToolArguments, stringifyToolInput } from './tool-arguments';
import { openAiToolName, toolNameMap } from './tool-names';

describe('tool arguments', () => {
  it('parses empty text as an empty object and wraps text that is not a JSON object', () => {
    expect(parseToolArguments('')).toEqual({});
    expect(parseToolArguments('  ')).toEqual({});
    expect(parseToolArguments('{"a":1}')).toEqual({ a: 1 });
    expect(parseToolArguments('{"a":')).toEqual({ _raw: '{"a":' });
    expect(parseToolArguments('[1]')).toEqual({ _raw: '[1]' });
  });

  it('turns a wrapped input back into the text it came from', () => {
    expect(stringifyToolInput(parseToolArguments('{"a":'))).toBe('{"a":');
    expect(stringifyToolInput({ a: 1 })).toBe('{"a":1}');
    expect(stringifyToolInput(undefined)).toBe('{}');
  });
});

describe('tool names', () => {
  it('leaves names up to 64 characters alone and cuts longer ones to 64, deterministically and distinctly', () => {
    const a = `${'a'.repeat(60)}_one_tool`;
    const b = `${'a'.repeat(60)}_two_tool`;
    expect(openAiToolName('short')).toBe('short');
    expect(openAiToolName('x'.repeat(64))).toBe('x'.repeat(64));
    expect(openAiToolName(a)).toHaveLength(64);
    expect(openAiToolName(a)).toBe(openAiToolName(a));
    expect(openAiToolName(a)).not.toBe(openAiToolName(b));
    expect(openAiToolName(a)).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(toolNameMap([{ name: a }, { name: 'short' }])).toEqual(new Map([[openAiToolName(a), a]]));
  });
});

describe('data URLs', () => {
  it('splits a base64 data URL and refuses one that is not base64', () => {
    expect(parseDataUrl('data:image/webp;base64,AAAA')).toEqual({ mediaType: 'image/webp', data: 'AAAA' });
    expect(parseDataUrl('data:application/pdf;name=a.pdf;base64,JVBE')).toEqual({
      mediaType: 'application/pdf',
      data: 'JVBE',
    });
    expect(parseDataUrl('data:text/plain,hello')).toBeUndefined();
    expect(parseDataUrl('https://x.test/a.png')).toBeUndefined();
  });
});

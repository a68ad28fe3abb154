import { parseHeaderLines } from './headers-text';

describe("the tool-server form's headers box", () => {
  it('reads one "Name: value" per line, values kept whole after the first colon', () => {
    expect(parseHeaderLines('X-Tenant: acme\n\nX-Url: https://a.example:8443/x\r\n')).toEqual({
      headers: { 'X-Tenant': 'acme', 'X-Url': 'https://a.example:8443/x' },
    });
  });

  it('an empty box is no headers', () => {
    expect(parseHeaderLines('')).toEqual({ headers: {} });
  });

  it('names the line it cannot split', () => {
    expect(parseHeaderLines('X-Ok: 1\nno colon here')).toEqual({ error: 'Line 2 is not "Name: value".' });
    expect(parseHeaderLines(': value only')).toEqual({ error: 'Line 1 is not "Name: value".' });
  });
});

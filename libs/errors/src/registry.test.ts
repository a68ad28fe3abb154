import { errorCodes, errorSpec } from './registry';

describe('error registry', () => {
  it('every code says what to do about it and whether a retry helps (the developer page is built from these)', () => {
    const undocumented = errorCodes.filter((code) => {
      const spec = errorSpec(code) as Partial<ReturnType<typeof errorSpec>>;
      return (
        typeof spec.action !== 'string' ||
        spec.action.trim().length < 10 ||
        typeof spec.retryable !== 'boolean' ||
        !spec.message?.trim()
      );
    });
    expect(undocumented).toEqual([]);
  });

  it('codes are snake_case, so each is a valid page anchor as it stands', () => {
    expect(errorCodes.filter((code) => !/^[a-z][a-z0-9_]*$/.test(code))).toEqual([]);
  });

  it('every status is an HTTP error status', () => {
    expect(errorCodes.filter((code) => errorSpec(code).status < 400 || errorSpec(code).status > 599)).toEqual([]);
  });
});

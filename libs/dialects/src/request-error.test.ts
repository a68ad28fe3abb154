import { ApiError, toEnvelope } from '@sbc/errors';
import { DialectRequestError, type DialectIssue } from './request-error';

const ISSUES: DialectIssue[] = [
  { path: 'messages.0.role', code: 'invalid_value', message: 'must be one of system, user, assistant, tool' },
  { path: 'temperature', code: 'invalid_value', message: 'must be between 0 and 2' },
];

describe('a request the dialect parsers refuse', () => {
  it('is an invalid_request ApiError that ApiError.from passes on as it is', () => {
    const error = new DialectRequestError(ISSUES);
    expect(ApiError.from(error)).toBe(error);
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, param: 'messages.0.role', issues: ISSUES });
  });

  it('reads to a caller as ApiError.invalid of the same issues: the first issue, its field, every issue', () => {
    const rendered = toEnvelope(new DialectRequestError(ISSUES), 'req_1', 'https://gw.example');
    expect(rendered).toEqual(toEnvelope(ApiError.invalid(ISSUES), 'req_1', 'https://gw.example'));
    expect(rendered.message).toBe('must be one of system, user, assistant, tool');
  });

  it("tells the library's own readers which field failed and how many more did", () => {
    expect(new DialectRequestError(ISSUES).message).toBe(
      'messages.0.role: must be one of system, user, assistant, tool (and 1 more problem)',
    );
    expect(new DialectRequestError(ISSUES.slice(1)).message).toBe('temperature: must be between 0 and 2');
  });

  it('with no issue listed still refuses with the registry sentence and no param', () => {
    const error = new DialectRequestError([]);
    expect(toEnvelope(error, 'req_1', 'https://gw.example')).toEqual(
      toEnvelope(ApiError.invalid([]), 'req_1', 'https://gw.example'),
    );
    expect(error.param).toBeUndefined();
  });
});

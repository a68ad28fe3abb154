import { ApiFailure, failureFrom } from './client';

describe('a refusal as the console reads it', () => {
  it('takes the shared envelope’s code, message and param', () => {
    const failure = failureFrom(400, 'Bad Request', {
      error: 'invalid_request',
      message: 'name is required',
      param: 'name',
      request_id: 'req_1',
    });
    expect(failure).toBeInstanceOf(ApiFailure);
    expect([failure.status, failure.code, failure.message, failure.param]).toEqual([
      400,
      'invalid_request',
      'name is required',
      'name',
    ]);
  });

  it('takes OpenAI’s error body (files and batches): its code, or its type when the code is null', () => {
    const coded = failureFrom(413, 'Payload Too Large', {
      error: {
        message: 'The file is larger than 200 MiB.',
        type: 'invalid_request_error',
        param: 'file',
        code: 'request_too_large',
      },
    });
    expect([coded.code, coded.message, coded.param]).toEqual([
      'request_too_large',
      'The file is larger than 200 MiB.',
      'file',
    ]);
    const typed = failureFrom(400, 'Bad Request', {
      error: { message: 'line 3: custom_id is required', type: 'invalid_request_error', param: null, code: null },
    });
    expect([typed.code, typed.message, typed.param]).toEqual([
      'invalid_request_error',
      'line 3: custom_id is required',
      undefined,
    ]);
  });

  it('takes Anthropic’s error body (message batches): its type as the code, and the problems it lists', () => {
    const failure = failureFrom(400, 'Bad Request', {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: '1 to 64 letters, digits, `_` or `-`.',
        issues: [
          { path: 'requests.1.custom_id', code: 'invalid_format', message: '1 to 64 letters, digits, `_` or `-`.' },
        ],
      },
    });
    expect([failure.code, failure.message, failure.issues]).toEqual([
      'invalid_request_error',
      '1 to 64 letters, digits, `_` or `-`.',
      [{ path: 'requests.1.custom_id', message: '1 to 64 letters, digits, `_` or `-`.' }],
    ]);
    expect(
      failureFrom(409, 'Conflict', { type: 'error', error: { type: 'invalid_request_error', message: 'x' } }).issues,
    ).toEqual([]);
  });

  it('falls back to the status text for a body that says nothing', () => {
    const failure = failureFrom(502, 'Bad Gateway', {});
    expect([failure.code, failure.message]).toEqual(['error', 'Bad Gateway']);
  });
});

import { anthropicErrorType, openAiErrorType, parseUpstreamError, renderErrorBody } from './error-bodies';

describe('parseUpstreamError', () => {
  it('reads an OpenAI error body', () => {
    expect(
      parseUpstreamError(404, {
        error: {
          message: 'The model `gpt-9` does not exist',
          type: 'invalid_request_error',
          param: null,
          code: 'model_not_found',
        },
      }),
    ).toEqual({
      status: 404,
      message: 'The model `gpt-9` does not exist',
      code: 'model_not_found',
      param: null,
    });
  });

  it('reads an Anthropic error body, keeping its type as the code', () => {
    expect(
      parseUpstreamError(529, {
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
        request_id: 'req_1',
      }),
    ).toEqual({
      status: 529,
      message: 'Overloaded',
      code: 'overloaded_error',
      param: null,
    });
  });

  it('reads JSON text, FastAPI detail, bare error strings and plain text', () => {
    expect(
      parseUpstreamError(400, '{"error":{"message":"bad","type":"invalid_request_error","param":"messages"}}'),
    ).toMatchObject({ message: 'bad', param: 'messages' });
    expect(parseUpstreamError(422, { detail: [{ loc: ['body'], msg: 'field required' }] }).message).toBe(
      '[{"loc":["body"],"msg":"field required"}]',
    );
    expect(parseUpstreamError(500, { error: 'boom' }).message).toBe('boom');
    expect(parseUpstreamError(502, '<html>Bad Gateway</html>').message).toBe('<html>Bad Gateway</html>');
    expect(parseUpstreamError(503, '')).toEqual({
      status: 503,
      message: 'The upstream answered with HTTP 503.',
      code: null,
      param: null,
    });
  });

  it('treats an error body with a success status as a bad gateway', () => {
    expect(parseUpstreamError(200, { error: { message: 'oops' } }).status).toBe(502);
  });
});

describe('renderErrorBody', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [422, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'api_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('gives a messages caller the Anthropic type for %i', (status, type) => {
    expect(anthropicErrorType(status)).toBe(type);
    expect(renderErrorBody('messages', { status, message: 'm' }, 'req_1')).toEqual({
      type: 'error',
      error: { type, message: 'm' },
      request_id: 'req_1',
    });
  });

  it('keeps an upstream overload an overloaded_error for a messages caller', () => {
    expect(
      renderErrorBody('messages', { status: 503, message: 'Overloaded', code: 'overloaded_error' }, 'r'),
    ).toMatchObject({ error: { type: 'overloaded_error' } });
  });

  it.each([
    [400, 'invalid_request_error', null],
    [401, 'authentication_error', 'invalid_api_key'],
    [402, 'insufficient_quota', 'insufficient_quota'],
    [403, 'permission_error', null],
    [404, 'not_found_error', null],
    [429, 'rate_limit_exceeded', 'rate_limit_exceeded'],
    [500, 'server_error', null],
    [503, 'server_error', null],
  ])('gives chat and responses callers the OpenAI type and code for %i', (status, type, code) => {
    expect(openAiErrorType(status)).toBe(type);
    for (const dialect of ['chat', 'responses'] as const) {
      expect(renderErrorBody(dialect, { status, message: 'm' }, 'req_1')).toEqual({
        error: { message: 'm', type, param: null, code },
        request_id: 'req_1',
      });
    }
  });

  it('says model_not_found when a 404 is about the model', () => {
    expect(renderErrorBody('chat', { status: 404, message: 'Unknown model "x"', param: 'model' }, 'r')).toMatchObject({
      error: { code: 'model_not_found', param: 'model' },
    });
  });

  it('passes an upstream’s own OpenAI code on, but not an Anthropic type', () => {
    expect(renderErrorBody('chat', { status: 429, message: 'quota', code: 'insufficient_quota' }, 'r')).toMatchObject({
      error: { code: 'insufficient_quota' },
    });
    expect(
      renderErrorBody('responses', { status: 529, message: 'Overloaded', code: 'overloaded_error' }, 'r'),
    ).toMatchObject({ error: { type: 'server_error', code: null } });
  });
});

import { ApiError, docUrl, errorCodes, errorSpec, toEnvelope } from './index';

describe('error envelope', () => {
  it('renders the spec fields with doc_url pointing at the developer page anchor', () => {
    const envelope = toEnvelope(new ApiError('unauthorized'), 'req_1', 'http://localhost:8080/');
    expect(envelope).toEqual({
      error: 'unauthorized',
      message: errorSpec('unauthorized').message,
      doc_url: 'http://localhost:8080/developers#errors-unauthorized',
      request_id: 'req_1',
    });
  });

  it('names the first bad field in param and lists every issue', () => {
    const error = ApiError.invalid([
      { path: 'messages.0.role', code: 'invalid_value', message: 'role must be one of user, assistant' },
      { path: 'model', code: 'invalid_type', message: 'model is required' },
    ]);
    const envelope = toEnvelope(error, 'req_2', 'https://gw.example');
    expect(envelope.param).toBe('messages.0.role');
    expect(envelope.issues).toHaveLength(2);
    expect(envelope.message).toBe('role must be one of user, assistant');
  });

  it('carries extra fields such as required_scopes without letting them override the core fields', () => {
    const error = new ApiError('insufficient_scope', undefined, {
      extra: { required_scopes: ['keys:write'], error: 'spoofed' },
    });
    const envelope = toEnvelope(error, 'req_3', 'https://gw.example');
    expect(envelope.required_scopes).toEqual(['keys:write']);
    expect(envelope.error).toBe('insufficient_scope');
  });

  it('never exposes the cause of an unknown failure', () => {
    const error = ApiError.from(new Error('connection string postgres://secret@db'));
    expect(error.code).toBe('internal_error');
    expect(JSON.stringify(toEnvelope(error, 'r', 'https://gw.example'))).not.toContain('secret');
  });

  it('maps every code to a 4xx or 5xx status and a doc anchor', () => {
    for (const code of errorCodes) {
      expect(errorSpec(code).status).toBeGreaterThanOrEqual(400);
      expect(docUrl('https://gw.example', code)).toBe(`https://gw.example/developers#errors-${code}`);
    }
  });
});

import { renderErrorBody } from '@sbc/dialects';
import { unreachableUpstream } from './dispatch';

describe('an upstream that gave no answer, in the error registry', () => {
  it('is upstream_timeout (504) or upstream_error (502), which OpenAI callers read as code', () => {
    expect(renderErrorBody('chat', unreachableUpstream(504, 'slow'), 'req_1')).toMatchObject({
      error: { code: 'upstream_timeout', message: 'slow' },
    });
    expect(renderErrorBody('responses', unreachableUpstream(502, 'refused'), 'req_1')).toMatchObject({
      error: { code: 'upstream_error' },
    });
    expect(unreachableUpstream(504, 'slow').status).toBe(504);
  });

  it("keeps Anthropic's own type, chosen by status", () => {
    expect(renderErrorBody('messages', unreachableUpstream(502, 'refused'), 'req_1')).toMatchObject({
      type: 'error',
      error: { type: 'api_error' },
    });
  });

  it('leaves a 503 (no engine free) without a registry code', () => {
    expect(unreachableUpstream(503, 'busy')).toEqual({ status: 503, message: 'busy' });
  });
});

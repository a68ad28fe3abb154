import { parseChatResponse } from './chat/parse-response';
import { renderErrorBody } from './error-bodies';
import { parseMessagesResponse } from './messages/parse-response';
import { UpstreamError } from './upstream-error';

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('an upstream failure', () => {
  it('carries the failure a caller would be answered, its status and message', () => {
    const error = new UpstreamError('timeout', { status: 504, message: 'The upstream did not answer in time.' });
    expect(error).toMatchObject({ reason: 'timeout', status: 504, message: 'The upstream did not answer in time.' });
    expect(renderErrorBody('messages', error.failure, 'req_1')).toMatchObject({ error: { type: 'timeout_error' } });
  });

  it('keeps what the transport said as its cause, apart from the message a caller reads', () => {
    const cause = new Error('connect ECONNREFUSED 10.0.0.7:8443');
    const error = new UpstreamError(
      'unreachable',
      { status: 502, message: 'The upstream could not be reached.' },
      { cause },
    );
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('The upstream could not be reached.');
  });

  it('an overload names how long to wait; other reasons name none', () => {
    const overload = new UpstreamError('overloaded', { status: 503, message: 'busy' }, { retryAfterSeconds: 1 });
    expect(overload.retryAfterSeconds).toBe(1);
    expect(new UpstreamError('unreachable', { status: 502, message: 'down' }).retryAfterSeconds).toBeUndefined();
  });

  it('an aborted call is recorded as the caller closing the request (499)', () => {
    expect(UpstreamError.aborted()).toMatchObject({ reason: 'aborted', status: 499 });
  });

  it('a 200 whose body is an error is a bad reply carrying the upstream error as it was written', () => {
    const chat = thrownBy(() => parseChatResponse({ error: { message: 'model overloaded', type: 'server_error' } }));
    expect(chat).toBeInstanceOf(UpstreamError);
    expect(chat).toMatchObject({ reason: 'bad_reply', failure: { status: 502, message: 'model overloaded' } });
    const messages = thrownBy(() => parseMessagesResponse({ type: 'message', role: 'assistant' }));
    expect(messages).toMatchObject({ reason: 'bad_reply', failure: { status: 502 } });
  });
});

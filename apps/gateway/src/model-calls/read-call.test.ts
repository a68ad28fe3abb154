import { callerDialect } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { MAX_TOKEN_COUNT } from '../limits/reservation-plan';
import { checkedCall, outputLimitField } from './read-call';

const CHAT = callerDialect('chat');
const RESPONSES = callerDialect('responses');
const MESSAGES = callerDialect('messages');

function issuesOf(run: () => unknown): Array<{ path: string; code: string }> {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return (error.issues ?? []).map(({ path, code }) => ({ path, code }));
    throw error;
  }
  return [];
}

describe('reading a call', () => {
  it('refuses a body that is not a JSON object', () => {
    for (const body of [null, [], 'text', 3]) {
      expect(() => checkedCall(CHAT, body)).toThrow(expect.objectContaining({ status: 400, param: 'body' }));
    }
  });

  it('lists every problem at once: the shared envelope, then the dialect’s own fields, then limits and strings', () => {
    const issues = issuesOf(() =>
      checkedCall(MESSAGES, { model: '', stream: 'yes', max_tokens: -1, system: 'a\u0000b' }),
    );
    expect(issues).toEqual([
      { path: 'model', code: 'required' },
      { path: 'stream', code: 'invalid_type' },
      { path: 'messages', code: 'required' },
      { path: 'max_tokens', code: 'invalid_value' },
      { path: 'system', code: 'invalid_string' },
    ]);
  });

  it('each dialect checks its own output-limit fields; null means "none" where OpenAI allows it', () => {
    expect(
      issuesOf(() => checkedCall(CHAT, { model: 'm', messages: [], max_tokens: null, max_completion_tokens: null })),
    ).toEqual([]);
    expect(issuesOf(() => checkedCall(RESPONSES, { model: 'm', input: 'hi', max_output_tokens: null }))).toEqual([]);
    expect(issuesOf(() => checkedCall(MESSAGES, { model: 'm', messages: [], max_tokens: null }))).toEqual([
      { path: 'max_tokens', code: 'invalid_value' },
    ]);
    expect(
      issuesOf(() => checkedCall(CHAT, { model: 'm', messages: [], max_completion_tokens: MAX_TOKEN_COUNT + 1 })),
    ).toEqual([{ path: 'max_completion_tokens', code: 'invalid_value' }]);
    expect(issuesOf(() => checkedCall(RESPONSES, { model: 'm', input: 'hi', max_output_tokens: 1.5 }))).toEqual([
      { path: 'max_output_tokens', code: 'invalid_value' },
    ]);
  });

  it('reads what routing needs: the model, the stream flag, and whether a chat caller wants the usage chunk', () => {
    const call = checkedCall(CHAT, { model: 'm', messages: [], stream: true, stream_options: { include_usage: true } });
    expect(call).toMatchObject({ adapter: CHAT, callerModel: 'm', stream: true, includeUsage: true });
    expect(checkedCall(MESSAGES, { model: 'm', messages: [], max_tokens: 5 })).toMatchObject({
      stream: false,
      includeUsage: false,
    });
  });

  it('names the output-limit field the caller used, or its dialect’s first', () => {
    expect(outputLimitField(checkedCall(CHAT, { model: 'm', messages: [], max_completion_tokens: 5 }))).toBe(
      'max_completion_tokens',
    );
    expect(outputLimitField(checkedCall(CHAT, { model: 'm', messages: [] }))).toBe('max_tokens');
    expect(outputLimitField(checkedCall(RESPONSES, { model: 'm', input: 'x' }))).toBe('max_output_tokens');
  });
});

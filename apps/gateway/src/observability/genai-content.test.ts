import type { ChatRequest } from '@sbc/dialects';
import { inputMessages, MAX_PART_CHARS, outputMessages, redactSecrets } from './genai-content';

describe('redactSecrets', () => {
  it.each([
    ['a caller key', 'key sbc_live_0123456789abcdef here', 'key [redacted] here'],
    ['a session token', 'sbs_0123456789abcdefghij', '[redacted]'],
    ['a device token', 'token sbd_abcdefghijkl', 'token [redacted]'],
    ['a webhook secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '[redacted]'],
    ['an OpenAI project key', 'use sk-proj-AbCdEf0123456789_xyz now', 'use [redacted] now'],
    ['an Anthropic key', 'sk-ant-api03-abcdefghijklmnop', '[redacted]'],
    ['an AWS access key id', 'AKIAIOSFODNN7EXAMPLE', '[redacted]'],
    ['a Google API key', 'AIzaSyA-1234567890abcdefghijklmnopqrstu', '[redacted]'],
    ['a GitHub token', 'ghp_0123456789abcdefghijABCDEFGHIJ', '[redacted]'],
    ['a Slack token', 'xoxb-123456789012-abcdefghij', '[redacted]'],
    ['a bearer token', 'Authorization: Bearer abc.def-ghi_jkl', 'Authorization: Bearer [redacted]'],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl', '[redacted]'],
    ['an assignment', 'api_key=abcd1234efgh and password: "hunter22"', 'api_key=[redacted] and password: "[redacted]"'],
    ['a JSON field', '{"client_secret": "s3cr3tvalue"}', '{"client_secret": "[redacted]"}'],
  ])('replaces %s', (_kind, text, redacted) => {
    expect(redactSecrets(text)).toBe(redacted);
  });

  it('replaces a PEM private key whole', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----';
    expect(redactSecrets(`key:\n${pem}\ndone`)).toBe('key:\n[redacted]\ndone');
  });

  it('leaves ordinary text alone', () => {
    const text = 'Ask the task-runner for a token count; sk-8 is a size, and my password is long.';
    expect(redactSecrets(text)).toBe(text);
  });
});

const request = (messages: ChatRequest['messages']): ChatRequest => ({
  model: 'm',
  messages,
  stream: false,
  dropped: [],
});

describe('inputMessages', () => {
  it('records every turn in order as role and parts, in the conventions’ shape', () => {
    const messages = inputMessages(
      request([
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', callId: 'call_1', content: [{ type: 'text', text: 'rainy' }] }],
        },
      ]),
    );
    expect(JSON.parse(messages)).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Weather?' }, { type: 'image' }] },
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'user', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'rainy' }] },
    ]);
    // An image's bytes are never copied into a trace.
    expect(messages).not.toContain('iVBORw0KGgo');
  });

  it('redacts secrets in text, tool arguments and tool results', () => {
    const messages = inputMessages(
      request([
        { role: 'user', content: [{ type: 'text', text: 'my key is sk-abcdefghijklmnop' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_call', id: 'c', name: 'login', arguments: '{"token":"sbc_abcdefghijkl"}' }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', callId: 'c', content: [{ type: 'text', text: 'Bearer abcdefghijkl' }] }],
        },
      ]),
    );
    expect(messages).not.toMatch(/sk-abc|sbc_abc|abcdefghijkl/);
    expect(messages.match(/\[redacted\]/g)).toHaveLength(3);
  });

  it('cuts a part past MAX_PART_CHARS and says so', () => {
    const long = 'a'.repeat(MAX_PART_CHARS + 10);
    const [message] = JSON.parse(inputMessages(request([{ role: 'user', content: [{ type: 'text', text: long }] }])));
    expect(message.parts[0].content).toBe(`${'a'.repeat(MAX_PART_CHARS)}…[truncated]`);
  });
});

describe('outputMessages', () => {
  it('records the reply as one assistant message with its finish reason', () => {
    const output = outputMessages([{ type: 'text', text: 'Hi, sk-abcdefghijklmnop' }], 'stop');
    expect(JSON.parse(output)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hi, [redacted]' }], finish_reason: 'stop' },
    ]);
  });
});

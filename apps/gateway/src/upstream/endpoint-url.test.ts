import { endpointUrl } from './endpoint-url';

describe('upstream endpoint URLs', () => {
  it.each([
    ['https://api.openai.com/v1', '/chat/completions', 'https://api.openai.com', '/v1/chat/completions'],
    ['https://api.anthropic.com', '/messages', 'https://api.anthropic.com', '/v1/messages'],
    ['https://api.anthropic.com/', '/messages', 'https://api.anthropic.com', '/v1/messages'],
    ['http://127.0.0.1:8090/v1/', '/messages/count_tokens', 'http://127.0.0.1:8090', '/v1/messages/count_tokens'],
    ['https://gw.example/openai', '/chat/completions', 'https://gw.example', '/openai/v1/chat/completions'],
  ] as const)('takes %s with or without /v1 (%s)', (base, path, origin, expected) => {
    expect(endpointUrl(base, path)).toEqual({ origin, path: expected });
  });
});

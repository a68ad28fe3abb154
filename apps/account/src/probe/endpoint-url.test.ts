import { endpointUrl } from './endpoint-url';

describe('the URL a probe dials', () => {
  it.each([
    ['https://api.openai.com/v1', 'https://api.openai.com', '/v1/models'],
    ['https://api.anthropic.com', 'https://api.anthropic.com', '/v1/models'],
    ['https://api.anthropic.com/', 'https://api.anthropic.com', '/v1/models'],
    ['http://127.0.0.1:8090/v1/', 'http://127.0.0.1:8090', '/v1/models'],
    ['https://gw.example/openai', 'https://gw.example', '/openai/v1/models'],
    ['https://gw.example/v1?api-version=2', 'https://gw.example', '/v1/models?api-version=2'],
  ] as const)('takes %s with or without /v1', (base, origin, path) => {
    expect(endpointUrl(base, '/models')).toEqual({ origin, path });
  });
});

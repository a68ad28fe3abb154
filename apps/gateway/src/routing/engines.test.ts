import { loadGatewayConfig } from '../config';

describe('engine configuration', () => {
  it('reads HOUSE_ENGINES with ordered fallbacks and any subset of house models', () => {
    const config = loadGatewayConfig({
      HOUSE_ENGINES: JSON.stringify({
        house: [
          { dialect: 'anthropic', base_url: 'https://api.anthropic.com', api_key: 'k', model: 'claude-x' },
          { dialect: 'openai', base_url: 'http://127.0.0.1:8090/v1', model: 'sim-large', label: 'sim' },
        ],
      }),
    });
    expect(config.houseEngines?.house?.map((e) => [e.dialect, e.model, e.label])).toEqual([
      ['anthropic', 'claude-x', 'api.anthropic.com'],
      ['openai', 'sim-large', 'sim'],
    ]);
  });

  it('names the variable when HOUSE_ENGINES is not valid', () => {
    expect(() => loadGatewayConfig({ HOUSE_ENGINES: '{"house": []}' })).toThrow(/HOUSE_ENGINES/);
    expect(() => loadGatewayConfig({ HOUSE_ENGINES: 'not json' })).toThrow(/HOUSE_ENGINES/);
    expect(() =>
      loadGatewayConfig({ PROVIDER_ENGINES: '{"openai": {"dialect": "x", "base_url": "ftp://a"}}' }),
    ).toThrow(/PROVIDER_ENGINES/);
  });
});

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

describe('provider deployments', () => {
  const load = (providers: unknown) => loadGatewayConfig({ PROVIDER_ENGINES: JSON.stringify(providers) });
  const endpoint = { dialect: 'openai', base_url: 'https://api.openai.com/v1', api_key: 'k' };

  it('reads one endpoint per vendor as one deployment of weight 1, labelled by its host', () => {
    expect(load({ openai: endpoint }).providerEngines.openai).toEqual([
      expect.objectContaining({ label: 'api.openai.com', weight: 1, baseUrl: endpoint.base_url, apiKey: 'k' }),
    ]);
  });

  it('reads a list of deployments with their weights and limits', () => {
    const config = load({
      openai: [
        { ...endpoint, label: 'east', weight: 3, rpm: 600, tpm: 90_000 },
        { ...endpoint, label: 'west', weight: 0 },
      ],
    });
    expect(config.providerEngines.openai?.map(({ label, weight, rpm, tpm }) => [label, weight, rpm, tpm])).toEqual([
      ['east', 3, 600, 90_000],
      ['west', 0, undefined, undefined],
    ]);
  });

  it.each([
    [
      'a label used twice',
      [
        { ...endpoint, label: 'a' },
        { ...endpoint, label: 'a' },
      ],
    ],
    ['a deployment without a label', [{ ...endpoint }]],
    ['a negative weight', [{ ...endpoint, label: 'a', weight: -1 }]],
    ['an rpm of 0', [{ ...endpoint, label: 'a', rpm: 0 }]],
    ['no deployment', []],
  ])('refuses to start on %s, naming PROVIDER_ENGINES', (_, list) => {
    expect(() => load({ openai: list })).toThrow(/PROVIDER_ENGINES/);
  });
});

describe('anthropic_beta on an engine', () => {
  const bedrock = {
    dialect: 'anthropic',
    base_url: 'https://bedrock-proxy.example/anthropic',
    api_key: 'k',
    anthropic_beta: { drop: ['claude-code-20250219'], map: { 'effort-2025-11-24': 'effort-2025-12-01' } },
  };

  it('is read on house engines and provider deployments alike; an empty one is none', () => {
    const config = loadGatewayConfig({
      HOUSE_ENGINES: JSON.stringify({ 'house-omni': [{ ...bedrock, model: 'claude-x' }] }),
      PROVIDER_ENGINES: JSON.stringify({
        anthropic: [
          { ...bedrock, label: 'bedrock' },
          { ...bedrock, label: 'plain', anthropic_beta: {} },
        ],
      }),
    });
    expect(config.houseEngines?.['house-omni']?.[0]?.anthropicBeta).toEqual(bedrock.anthropic_beta);
    expect(config.providerEngines.anthropic?.map((deployment) => deployment.anthropicBeta)).toEqual([
      bedrock.anthropic_beta,
      undefined,
    ]);
  });

  it.each([
    ['a value with a comma', { drop: ['a,b'] }],
    ['a value named in drop and map', { drop: ['a'], map: { a: 'b' } }],
    ['an unknown field', { allow: ['a'] }],
    ['too many values', { drop: Array.from({ length: 65 }, (_, i) => `b-${i}`) }],
  ])('refuses to start on %s, naming the variable', (_, policy) => {
    expect(() =>
      loadGatewayConfig({ PROVIDER_ENGINES: JSON.stringify({ anthropic: { ...bedrock, anthropic_beta: policy } }) }),
    ).toThrow(/PROVIDER_ENGINES/);
  });
});

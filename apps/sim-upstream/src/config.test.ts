import { ConfigError } from '@sbc/config';
import { loadSimConfig } from './config';

describe('sim-upstream config', () => {
  it('starts with no environment at all, on the documented defaults', () => {
    expect(loadSimConfig({})).toEqual({
      port: 8090,
      host: '127.0.0.1',
      latencyMs: 20,
      tokensPerSecond: 200,
      slowMs: 10_000,
      apiKey: undefined,
      extraModels: [],
      faultControl: false,
      logLevel: 'info',
    });
  });

  it('reads every variable, with 0 allowed for latency and token rate', () => {
    const config = loadSimConfig({
      SIM_PORT: '0',
      SIM_HOST: '0.0.0.0',
      SIM_LATENCY_MS: '0',
      SIM_TOKENS_PER_SECOND: '0',
      SIM_SLOW_MS: '250',
      SIM_API_KEY: 'secret',
      SIM_MODELS: 'house-a, house-b,,',
      SIM_FAULTS: 'true',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 0,
      latencyMs: 0,
      tokensPerSecond: 0,
      slowMs: 250,
      apiKey: 'secret',
      extraModels: ['house-a', 'house-b'],
      faultControl: true,
    });
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadSimConfig({ SIM_PORT: 'eighty', SIM_TOKENS_PER_SECOND: '-1', LOG_LEVEL: 'loud' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.variable).sort()).toEqual([
      'LOG_LEVEL',
      'SIM_PORT',
      'SIM_TOKENS_PER_SECOND',
    ]);
  });
});

import { loadGatewayConfig, NO_USAGE_SINK, start } from './main';

describe('an edge started on its own (services mode)', () => {
  it('refuses to start without KAFKA_BROKERS, saying why and what to set', async () => {
    const config = loadGatewayConfig({ PORT: '0', LOG_LEVEL: 'silent' });
    await expect(start(config)).rejects.toThrow(NO_USAGE_SINK);
    expect(NO_USAGE_SINK).toContain('USAGE_EVENTS=off');
  });

  it('does not take USAGE_EVENTS=off together with KAFKA_BROKERS', () => {
    expect(() => loadGatewayConfig({ KAFKA_BROKERS: '127.0.0.1:9092', USAGE_EVENTS: 'off' })).toThrow(/USAGE_EVENTS/);
  });
});

describe('OTEL_GENAI_CAPTURE_CONTENT', () => {
  it('is off unless the operator turns it on', () => {
    expect(loadGatewayConfig({}).genAiCaptureContent).toBe(false);
    expect(loadGatewayConfig({ OTEL_GENAI_CAPTURE_CONTENT: 'true' }).genAiCaptureContent).toBe(true);
  });

  it('refuses a value that is not a switch, naming the variable', () => {
    expect(() => loadGatewayConfig({ OTEL_GENAI_CAPTURE_CONTENT: 'prompts' })).toThrow(/OTEL_GENAI_CAPTURE_CONTENT/);
  });
});

describe('BATCHES_RATE_SHARE', () => {
  it("is half of the creating key's limits unless set, and takes any share above 0 up to all", () => {
    expect(loadGatewayConfig({}).batchRateShare).toBe(0.5);
    expect(loadGatewayConfig({ BATCHES_RATE_SHARE: '0.25' }).batchRateShare).toBe(0.25);
    expect(loadGatewayConfig({ BATCHES_RATE_SHARE: '1' }).batchRateShare).toBe(1);
  });

  it.each(['0', '-0.5', '1.5', 'half'])('refuses %s, naming the variable', (value) => {
    expect(() => loadGatewayConfig({ BATCHES_RATE_SHARE: value })).toThrow(/BATCHES_RATE_SHARE/);
  });
});

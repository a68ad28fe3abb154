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

describe('SBC_BENCH_STEPS_OFF (bench only)', () => {
  const benchEdge = { USAGE_EVENTS: 'off' };

  it('leaves every step in when unset', () => {
    expect(loadGatewayConfig({}).benchStepsOff.size).toBe(0);
    expect(loadGatewayConfig(benchEdge).benchStepsOff.size).toBe(0);
  });

  it('takes a list of steps on an edge that records no usage', () => {
    const config = loadGatewayConfig({ ...benchEdge, SBC_BENCH_STEPS_OFF: ' metrics, admit ,scans,record' });
    expect([...config.benchStepsOff].sort()).toEqual(['admit', 'metrics', 'record', 'scans']);
  });

  it('refuses a name that is no step, listing the steps', () => {
    expect(() => loadGatewayConfig({ ...benchEdge, SBC_BENCH_STEPS_OFF: 'metrics,auth' })).toThrow(
      /SBC_BENCH_STEPS_OFF: "auth" is no step; the steps are metrics, record, admit, scans/,
    );
  });

  it('is refused on an edge that records usage (a billing edge never runs without its steps)', () => {
    expect(() => loadGatewayConfig({ SBC_BENCH_STEPS_OFF: 'metrics' })).toThrow(
      /SBC_BENCH_STEPS_OFF: is for benchmarks only and needs USAGE_EVENTS=off/,
    );
    expect(() => loadGatewayConfig({ KAFKA_BROKERS: '127.0.0.1:9092', SBC_BENCH_STEPS_OFF: 'record' })).toThrow(
      /SBC_BENCH_STEPS_OFF/,
    );
  });
});

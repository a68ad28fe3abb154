import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { HotPathCounter, HotPathHistogram } from './hot-path';

function registryFor(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  return registry;
}

describe('hot-path metrics', () => {
  it('expose the same text as prom-client for the same observations', async () => {
    const ours = registryFor('gateway');
    const theirs = registryFor('gateway');
    const buckets = [0.001, 0.01, 0.1, 1];
    const options = (registry: Registry) => ({
      name: 'sbc_test_duration_seconds',
      help: 'Test durations.',
      labelNames: ['route', 'dialect'] as const,
      buckets,
      registers: [registry],
    });
    const counterOptions = (registry: Registry) => ({
      name: 'sbc_test_calls_total',
      help: 'Test calls.',
      labelNames: ['dialect', 'status'] as const,
      registers: [registry],
    });
    const hist = new HotPathHistogram(options(ours));
    const promHist = new Histogram(options(theirs));
    const counter = new HotPathCounter(counterOptions(ours));
    const promCounter = new Counter(counterOptions(theirs));
    const observations: Array<[Record<string, string>, number]> = [
      [{ route: '/v1/messages', dialect: 'messages' }, 0.0004],
      [{ route: '/v1/messages', dialect: 'messages' }, 0.05],
      // Past the last bound: only +Inf, _sum and _count see it.
      [{ route: '/v1/messages', dialect: 'messages' }, 7],
      [{ route: '/v1/chat/completions', dialect: 'chat' }, 0.01],
      // A value that needs escaping, and a label left out.
      [{ route: 'a "quoted"\\path\n' }, 0.2],
    ];
    for (const [labels, value] of observations) {
      hist.observe(labels, value);
      promHist.observe(labels, value);
    }
    for (const [labels, amount] of [
      [{ dialect: 'chat', status: '200' }, 1],
      [{ dialect: 'chat', status: '200' }, 2],
      [{ dialect: 'messages', status: '529' }, 1],
      [{ dialect: 'chat', status: '' }, 1],
      [{ dialect: 'chat' }, 1],
    ] as const) {
      counter.inc(labels, amount);
      promCounter.inc(labels, amount);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('sbc_test_duration_seconds_bucket{le="+Inf",service="gateway",route="/v1/messages",');
    // An absent label is a series of its own, apart from an empty one.
    expect(text).toContain('sbc_test_calls_total{dialect="chat",status="",service="gateway"} 1');
    expect(text).toContain('sbc_test_calls_total{dialect="chat",service="gateway"} 1');
    // The JSON form too, but for prom-client's exemplar slots (null without exemplars enabled).
    const withoutExemplars = (metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
      metrics.map((metric) => ({
        ...metric,
        values: metric.values.map((value) => {
          const { exemplar: _slot, ...rest } = value as typeof value & { exemplar?: unknown };
          return rest;
        }),
      }));
    expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
  });

  it('keep one series per label set, whatever the values, as prom-client does', async () => {
    // Values that could run together if they were joined into one key ('a' + 'b:c' against 'a:b' + 'c'), empty
    // ones, and absent ones.
    const value = fc.option(fc.constantFrom('', 'a', 'b', 'a:b', 'b:c', '1:a', '-', 'x'.repeat(3)), {
      nil: undefined,
    });
    const labelSet = fc.record({ first: value, second: value, third: value });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(labelSet, fc.integer({ min: 1, max: 5 })), { maxLength: 40 }),
        async (incs) => {
          const ours = registryFor('gateway');
          const theirs = registryFor('gateway');
          const options = (registry: Registry) => ({
            name: 'sbc_test_total',
            help: 'x',
            labelNames: ['first', 'second', 'third'] as const,
            registers: [registry],
          });
          const counter = new HotPathCounter(options(ours));
          const promCounter = new Counter(options(theirs));
          for (const [labels, amount] of incs) {
            const given = Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== undefined));
            counter.inc(given, amount);
            promCounter.inc(given, amount);
          }
          expect(await ours.metrics()).toBe(await theirs.metrics());
        },
      ),
    );
  });

  it('a histogram without labels, and a reset', async () => {
    const registry = registryFor('edge');
    const waits = new HotPathHistogram({
      name: 'sbc_test_wait_seconds',
      help: 'x',
      buckets: [1, 2],
      registers: [registry],
    });
    waits.observe({}, 1);
    waits.observe({}, 1.5);
    expect(await registry.metrics()).toContain(
      [
        'sbc_test_wait_seconds_bucket{le="1",service="edge"} 1',
        'sbc_test_wait_seconds_bucket{le="2",service="edge"} 2',
        'sbc_test_wait_seconds_bucket{le="+Inf",service="edge"} 2',
        'sbc_test_wait_seconds_sum{service="edge"} 2.5',
        'sbc_test_wait_seconds_count{service="edge"} 2',
      ].join('\n'),
    );
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('sbc_test_wait_seconds_count');
  });

  it('keeps label sets apart whatever their values hold', async () => {
    const registry = registryFor('edge');
    const counter = new HotPathCounter({
      name: 'sbc_test_pairs_total',
      help: 'x',
      labelNames: ['a', 'b'] as const,
      registers: [registry],
    });
    counter.inc({ a: '1:x', b: '' });
    counter.inc({ a: '1', b: 'x:' });
    counter.inc({ a: '', b: '-' });
    counter.inc({ b: '-' });
    counter.inc({ a: 'x\u0001', b: 'y' });
    counter.inc({ a: 'x', b: '\u0001y' });
    const values = (await registry.getMetricsAsJSON())[0]!.values;
    expect(values.map((value) => value.value)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('refuses a value that is not a finite number, as prom-client does', () => {
    const hist = new HotPathHistogram({ name: 'sbc_test_nan', help: 'x', buckets: [1], registers: [] });
    expect(() => hist.observe({}, Number.NaN)).toThrow(TypeError);
  });

  it('a name taken twice in one registry is refused', () => {
    const registry = registryFor('edge');
    new HotPathCounter({ name: 'sbc_test_twice_total', help: 'x', registers: [registry] });
    expect(() => new HotPathCounter({ name: 'sbc_test_twice_total', help: 'x', registers: [registry] })).toThrow(
      /already been registered/,
    );
  });
});

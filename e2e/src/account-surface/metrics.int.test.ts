import OpenAI from 'openai';
import { freePort } from '@sbc/testing';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

/** The value of one series in a Prometheus text exposition, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('Prometheus metrics', () => {
  let stack: AccountSurfaceStack;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    stack = await startStack({
      label: 'metrics',
      edgeEnv: { METRICS_PORT: String(metricsPort), RATE_LIMIT_PER_MINUTE: '2' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const scrape = async (url: string) => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return res.text();
  };

  it(
    'the edge counts requests by route template, model calls by dialect and upstream, time to first token and ' +
      'rate-limit refusals',
    async () => {
      const openai = new OpenAI({ apiKey: OWNER_KEY, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 });
      await openai.chat.completions.create({ model: 'house', messages: [{ role: 'user', content: 'count me' }] });
      const stream = await openai.chat.completions.create({
        model: 'house',
        stream: true,
        messages: [{ role: 'user', content: 'sim-tokens:3' }],
      });
      for await (const _chunk of stream) void _chunk;
      // Another key renames itself: REST calls count against the caller's bucket too, and the owner's is
      // kept for the model calls below.
      const key = await stack.seedKey();
      const edited = await fetch(`${stack.edge.url}/v1/keys/${key.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'renamed' }),
      });
      expect(edited.status).toBe(200);
      // The bucket holds two calls a minute here: the third is refused.
      const refused = await openai.chat.completions
        .create({ model: 'house', messages: [{ role: 'user', content: 'one too many' }] })
        .then(
          () => 0,
          (error: { status?: number }) => error.status,
        );
      expect(refused).toBe(429);

      const text = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(sample(text, 'sbc_model_calls_total', { dialect: 'chat', status: '200', service: 'gateway' })).toBe(2);
      expect(sample(text, 'sbc_time_to_first_token_seconds_count', { dialect: 'chat' })).toBe(2);
      expect(sample(text, 'sbc_upstream_latency_seconds_count')).toBe(2);
      expect(sample(text, 'sbc_rate_limit_refusals_total')).toBe(1);
      expect(sample(text, 'sbc_http_requests_total', { route: '/v1/keys/:id', method: 'PATCH', status: '200' })).toBe(
        1,
      );
      expect(sample(text, 'sbc_http_requests_total', { route: '/v1/chat/completions', status: '429' })).toBe(1);
      expect(
        sample(text, 'sbc_http_request_duration_seconds_count', { route: '/v1/chat/completions', dialect: 'chat' }),
      ).toBe(3);
      expect(sample(text, 'sbc_http_requests_in_flight')).toBe(0);
      expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    },
  );

  it('with a metrics port of its own, the edge does not answer scrapes on its public port', async () => {
    const res = await fetch(`${stack.edge.url}/metrics`);
    expect(res.status).toBe(404);
  });

  it('a backend answers scrapes on its health port', async () => {
    const text = await scrape(`${stack.account.httpUrl}/metrics`);
    expect(sample(text, 'process_cpu_seconds_total', { service: 'account' })).toBeGreaterThanOrEqual(0);
  });
});

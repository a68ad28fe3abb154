import { networkInterfaces } from 'node:os';
import Anthropic, { type APIError as AnthropicApiError } from '@anthropic-ai/sdk';
import OpenAI, { type APIError as OpenAiApiError } from 'openai';
import type { RunningSim } from './main';
import { anthropicClient, openAiClient, startSim } from './test-support';

const user = [{ role: 'user' as const, content: 'hi' }];

async function control(sim: RunningSim, method: 'GET' | 'POST' | 'DELETE', plan?: unknown) {
  const res = await fetch(`${sim.url}/__faults`, {
    method,
    headers: plan === undefined ? {} : { 'content-type': 'application/json' },
    body: plan === undefined ? undefined : JSON.stringify(plan),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('fault control is a fixture, off unless asked for', () => {
  it('answers 404 when SIM_FAULTS is off (the default)', async () => {
    const sim = await startSim();
    try {
      expect((await control(sim, 'POST', { failure_rate: 1 })).status).toBe(404);
      expect((await control(sim, 'GET')).status).toBe(404);
      await expect(openAiClient(sim).chat.completions.create({ model: 'm', messages: user })).resolves.toBeDefined();
    } finally {
      await sim.stop();
    }
  });

  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((nic) => nic && nic.family === 'IPv4' && !nic.internal)?.address;
  (lanAddress ? it : it.skip)('refuses a caller that is not on this machine, even when on', async () => {
    const sim = await startSim({ host: '0.0.0.0', faultControl: true });
    try {
      const port = new URL(sim.url).port;
      const remote = await fetch(`http://${lanAddress}:${port}/__faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ failure_rate: 1 }),
      });
      expect(remote.status).toBe(404);
      expect((await control(sim, 'GET')).body.plan).toBeNull();
    } finally {
      await sim.stop();
    }
  });
});

describe('fault plans', () => {
  let sim: RunningSim;
  beforeAll(async () => {
    sim = await startSim({ faultControl: true });
  });
  afterEach(() => control(sim, 'DELETE'));
  afterAll(() => sim.stop());

  it.each([
    [{ failure_rate: 1.5 }, 'failure_rate'],
    [{ failure_rate: 0.5, failures: { '429': 0, '503': 0 } }, 'failures'],
    [{ failures: { '418': 1 } }, 'failures'],
    [{ hang_ms: -1 }, 'hang_ms'],
    [{ down_with: 'smoke' }, 'down_with'],
    [{ failure_rat: 0.5 }, null],
  ])('refuses a bad plan %j with 400 naming the field', async (plan, param) => {
    const { status, body } = await control(sim, 'POST', plan);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_fault_plan', param });
    expect((await control(sim, 'GET')).body.plan).toBeNull();
  });

  it('refuses a body that is not JSON', async () => {
    const res = await fetch(`${sim.url}/__faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"failure_rate":',
    });
    expect(res.status).toBe(400);
  });

  it('answers 429 with the plan’s retry-after, in each dialect’s error shape', async () => {
    await control(sim, 'POST', { failure_rate: 1, failures: { '429': 1 }, retry_after_s: 7 });
    const openai = (await openAiClient(sim)
      .chat.completions.create({ model: 'm', messages: user })
      .catch((e: unknown) => e)) as OpenAiApiError;
    expect(openai).toBeInstanceOf(OpenAI.RateLimitError);
    expect(openai.headers?.get('retry-after')).toBe('7');
    const anthropic = (await anthropicClient(sim)
      .messages.create({ model: 'm', max_tokens: 5, messages: user })
      .catch((e: unknown) => e)) as AnthropicApiError;
    expect(anthropic).toBeInstanceOf(Anthropic.RateLimitError);
    expect(anthropic.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    const { counts } = (await control(sim, 'GET')).body;
    expect(counts).toMatchObject({ calls: 2, served: 0, failed: 2, by_outcome: { '429': 2 } });
  });

  it('fails about the planned share of calls with the planned mix, and counts them', async () => {
    await control(sim, 'POST', { failure_rate: 0.3, failures: { '429': 1, '503': 1 }, seed: 7 });
    const client = openAiClient(sim);
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      const result = await client.chat.completions.create({ model: 'm', messages: user }).then(
        () => 200,
        (e: OpenAiApiError) => e.status ?? 0,
      );
      statuses.push(result);
    }
    const failed = statuses.filter((s) => s !== 200);
    expect(failed.length).toBeGreaterThan(35);
    expect(failed.length).toBeLessThan(85);
    expect(new Set(failed)).toEqual(new Set([429, 503]));
    const report = (await control(sim, 'GET')).body;
    expect(report.counts).toMatchObject({ calls: 200, failed: failed.length, served: 200 - failed.length });
    expect(report.calls_while_active).toHaveLength(200);
    expect(report.calls_while_active.filter((c: any) => c.outcome !== 'ok')).toHaveLength(failed.length);
  });

  it('a hang holds the answer for hang_ms, then answers', async () => {
    await control(sim, 'POST', { failure_rate: 1, failures: { hang: 1 }, hang_ms: 300 });
    const startedAt = Date.now();
    await expect(openAiClient(sim).chat.completions.create({ model: 'm', messages: user })).resolves.toBeDefined();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(290);
    const impatientAt = Date.now();
    const impatient = openAiClient(sim, { timeout: 100 }).chat.completions.create({ model: 'm', messages: user });
    await expect(impatient).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    expect(Date.now() - impatientAt).toBeLessThan(290);
  });

  it('reset_mid_stream delivers the first chunk, then the connection drops', async () => {
    await control(sim, 'POST', { failure_rate: 1, failures: { reset_mid_stream: 1 }, reset_after_chunks: 1 });
    const stream = await openAiClient(sim).chat.completions.create({ model: 'm', messages: user, stream: true });
    const chunks: unknown[] = [];
    const broke = await (async () => {
      for await (const chunk of stream) chunks.push(chunk);
    })().then(
      () => false,
      () => true,
    );
    expect(broke).toBe(true);
    expect(chunks).toHaveLength(1);
  });

  it('reset_before_first_chunk answers 200 and drops the connection before any chunk', async () => {
    await control(sim, 'POST', { failure_rate: 1, failures: { reset_before_first_chunk: 1 } });
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: user, stream: true }),
    });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    const whole = await openAiClient(sim)
      .chat.completions.create({ model: 'm', messages: user })
      .catch((e: unknown) => ({ failed: String(e) }));
    expect(whole).toEqual({ failed: expect.stringMatching(/terminated|closed|socket/i) });
  });

  it('a whole reply cut mid-body fails in the client', async () => {
    await control(sim, 'POST', { failure_rate: 1, failures: { reset_mid_stream: 1 } });
    const failure = await openAiClient(sim)
      .chat.completions.create({ model: 'm', messages: user })
      .catch((e: unknown) => ({ failed: String(e) }));
    expect(failure).toEqual({ failed: expect.stringMatching(/terminated|closed|socket|JSON/i) });
  });

  it('down_for_ms refuses every call for that long, then serves again', async () => {
    const set = await control(sim, 'POST', { down_for_ms: 400 });
    const client = openAiClient(sim);
    await expect(client.chat.completions.create({ model: 'm', messages: user })).rejects.toBeInstanceOf(
      OpenAI.APIConnectionError,
    );
    await new Promise((resolve) => setTimeout(resolve, 450));
    await expect(client.chat.completions.create({ model: 'm', messages: user })).resolves.toBeDefined();
    const report = (await control(sim, 'GET')).body;
    expect(report.counts.by_outcome).toEqual({ down: 1, ok: 1 });
    const [down, ok] = report.calls_while_active;
    expect(down.outcome).toBe('down');
    expect(down.at_ms - set.body.active_since_ms).toBeLessThan(400);
    expect(ok.at_ms - set.body.active_since_ms).toBeGreaterThanOrEqual(400);
  });

  it('down_with 503 answers 503 instead of dropping the connection', async () => {
    await control(sim, 'POST', { down_for_ms: 60_000, down_with: '503' });
    const failure = await openAiClient(sim)
      .chat.completions.create({ model: 'm', messages: user })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.InternalServerError);
    expect((failure as OpenAiApiError).status).toBe(503);
  });

  it('DELETE ends the plan and keeps its counts readable', async () => {
    await control(sim, 'POST', { failure_rate: 1 });
    await openAiClient(sim)
      .chat.completions.create({ model: 'm', messages: user })
      .catch(() => undefined);
    const ended = await control(sim, 'DELETE');
    expect(ended.body).toMatchObject({ plan: null, counts: { calls: 1, failed: 1 } });
    await expect(openAiClient(sim).chat.completions.create({ model: 'm', messages: user })).resolves.toBeDefined();
  });
});

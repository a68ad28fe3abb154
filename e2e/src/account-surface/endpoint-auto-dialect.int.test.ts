import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { OWNER_KEY, startStack, type AccountSurfaceStack } from '../support/stack';

/**
 * `dialect: auto` decides by what the endpoint is, not by which credential header it tolerates (issue 17):
 * a server on 127.0.0.1 that speaks only Anthropic Messages and answers the model list whatever key header
 * comes (as self-hosted servers and proxies do) is recorded as `anthropic`, with the reason, and callers in
 * all three dialects reach it through the edge.
 */

describe('an auto endpoint that answers both probes', () => {
  let stack: AccountSurfaceStack;
  let anthropicOnly: RunningSim;
  beforeAll(async () => {
    stack = await startStack({ label: 'auto-dialect' });
    anthropicOnly = await startSim(
      loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }),
      { dialects: ['anthropic'] },
    );
  }, 60_000);
  afterAll(async () => {
    await anthropicOnly?.stop();
    await stack?.stop();
  });

  it('is recorded as anthropic by its model list shape, and calls in every caller dialect succeed', async () => {
    const saved = await stack.api('POST', '/v1/upstreams', {
      key: OWNER_KEY,
      body: { label: 'Claude box', base_url: anthropicOnly.url, dialect: 'auto', api_key: 'sk-box' },
    });
    expect(saved.status).toBe(201);
    expect(saved.body.probe).toMatchObject({
      ok: true,
      dialect: 'anthropic',
      dialect_reason: expect.stringContaining("Anthropic's shape"),
    });
    expect(saved.body.upstream).toMatchObject({
      slug: 'claude-box',
      dialect: 'anthropic',
      dialect_setting: 'auto',
      models: ['sim-large', 'sim-small'],
    });

    const openai = new OpenAI({ apiKey: OWNER_KEY, baseURL: `${stack.edge.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: OWNER_KEY, baseURL: stack.edge.url, maxRetries: 0 });
    const chat = await openai.chat.completions.create({
      model: 'claude-box/sim-large',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(chat.choices[0]!.message.content).toContain('Simulated reply to: hello there');
    const responses = await openai.responses.create({ model: 'claude-box/sim-large', input: 'hello there' });
    expect(responses.output_text).toContain('Simulated reply to: hello there');
    const messages = await anthropic.messages.create({
      model: 'claude-box/sim-large',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(messages.content[0]).toEqual({
      type: 'text',
      text: expect.stringContaining('Simulated reply to: hello there'),
    });
  });
});

import Anthropic from '@anthropic-ai/sdk';
import { rejectionOf } from '@sbc/testing';
import type { RunningSim } from './main';
import { anthropicClient, openAiClient, startSim } from './test-support';

let sim: RunningSim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(() => sim.stop());

const fronted = (prefix: string) =>
  new Anthropic({ apiKey: 'sk-ant-test', baseURL: `${sim.url}/${prefix}`, maxRetries: 0 });
const hello = { model: 'claude-x', max_tokens: 20, messages: [{ role: 'user' as const, content: 'Hello there' }] };
const betas = (...values: string[]) => ({ headers: { 'anthropic-beta': values.join(',') } });

describe('endpoints fronting Claude on other clouds (/vertex, /bedrock)', () => {
  it('Vertex refuses beta values it does not take, naming them as Anthropic does', async () => {
    const refused = await rejectionOf(
      fronted('vertex').messages.create(hello, betas('claude-code-20250219', 'effort-2025-11-24', 'x-2')),
    );
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: expect.stringMatching(
          /^Unexpected value\(s\) `claude-code-20250219`, `x-2` for the `anthropic-beta` header/,
        ),
      },
    });
    const count = await rejectionOf(
      fronted('vertex').messages.countTokens({ model: 'claude-x', messages: hello.messages }, betas('x-2')),
    );
    expect(count).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('Bedrock refuses them without naming any', async () => {
    const refused = await rejectionOf(fronted('bedrock').messages.create(hello, betas('claude-code-20250219')));
    expect(refused).toMatchObject({ status: 400, error: { error: { message: 'invalid beta flag' } } });
  });

  it('takes the betas it knows, and no beta at all; everything else is served as at the root', async () => {
    const known = await fronted('bedrock').messages.create(hello, betas('interleaved-thinking-2025-05-14'));
    expect(known.content).toEqual([{ type: 'text', text: 'Simulated reply to: Hello there' }]);
    expect((await fronted('vertex').messages.create(hello)).stop_reason).toBe('end_turn');
    const models = await fetch(`${sim.url}/vertex/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(models.status).toBe(200);
  });

  it('first party (the root) takes every beta value', async () => {
    const answer = await anthropicClient(sim).messages.create(hello, betas('claude-code-20250219', 'x-2'));
    expect(answer.stop_reason).toBe('end_turn');
  });
});

describe('sim-usage: cache and reasoning tokens on demand, the same streamed or not', () => {
  const prompt = 'Hello there sim-usage:cache_read=40,cache_write=12,reasoning=7';

  it('in Messages: cache counts beside input_tokens, thinking inside output_tokens', async () => {
    const request = { model: 'claude-x', max_tokens: 50, messages: [{ role: 'user' as const, content: prompt }] };
    const whole = await anthropicClient(sim).messages.create(request);
    expect(whole.usage).toMatchObject({
      cache_read_input_tokens: 40,
      cache_creation_input_tokens: 12,
      output_tokens_details: { thinking_tokens: 7 },
    });
    // One token per word piece of the reply, and the reasoning on top.
    const text = whole.content[0]!.type === 'text' ? whole.content[0]!.text : '';
    expect(whole.usage.output_tokens).toBe(text.match(/\s*\S+/g)!.length + 7);
    const stream = anthropicClient(sim).messages.stream(request);
    const final = await stream.finalMessage();
    expect(final.usage).toMatchObject({
      input_tokens: whole.usage.input_tokens,
      cache_read_input_tokens: 40,
      cache_creation_input_tokens: 12,
      output_tokens: whole.usage.output_tokens,
    });
  });

  it('in chat completions: cache counts inside prompt_tokens, reasoning inside completion_tokens', async () => {
    const messages = [{ role: 'user' as const, content: prompt }];
    const whole = await openAiClient(sim).chat.completions.create({ model: 'sim-large', messages });
    expect(whole.usage).toMatchObject({
      prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 12 },
      completion_tokens_details: { reasoning_tokens: 7 },
    });
    const chunks = await openAiClient(sim).chat.completions.create({
      model: 'sim-large',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of chunks) if (chunk.usage) usage = chunk.usage;
    expect(usage).toEqual(whole.usage);
  });
});

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RunningSim } from './main';
import { anthropicClient, openAiClient, startSim, weatherSchema } from './test-support';

/**
 * The simulator refuses what the real providers refuse, with their status and error shape, so a gateway
 * translation that a provider would reject fails in tests first.
 */

let sim: RunningSim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(() => sim.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('Anthropic Messages rules', () => {
  const tools = [{ name: 'get_weather', input_schema: weatherSchema as Anthropic.Tool.InputSchema }];
  const toolUse = {
    role: 'assistant' as const,
    content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }],
  };
  const result = (id: string) => ({
    role: 'user' as const,
    content: [{ type: 'tool_result' as const, tool_use_id: id, content: 'sunny' }],
  });
  const ask = { role: 'user' as const, content: 'weather in Paris?' };

  async function refusal(body: Record<string, unknown>, path = '/v1/messages') {
    const res = await post(path, body, { 'anthropic-version': '2023-06-01' });
    return {
      status: res.status,
      body: (await res.json()) as { type: string; error: { type: string; message: string } },
    };
  }

  it('accepts a tool loop whose tool_result follows its tool_use with the same id', async () => {
    const reply = await anthropicClient(sim).messages.create({
      model: 'm',
      max_tokens: 100,
      tools,
      messages: [ask, toolUse, result('toolu_1')],
    });
    expect(reply.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('tool result') });
    expect(reply.content[0]).not.toHaveProperty('citations');
  });

  it('refuses a tool_result whose id no tool_use in the previous message has, in Anthropic’s error shape', async () => {
    const failure = await anthropicClient(sim)
      .messages.create({ model: 'm', max_tokens: 100, tools, messages: [ask, toolUse, result('toolu_other')] })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
    expect((failure as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('unexpected `tool_use_id`') },
    });
  });

  it('refuses a tool_use not answered in the next message', async () => {
    const { status, body } = await refusal({
      model: 'm',
      max_tokens: 100,
      tools,
      messages: [ask, toolUse, { role: 'user', content: 'and?' }],
    });
    expect(status).toBe(400);
    expect(body.error.message).toContain(
      '`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1',
    );
  });

  it('refuses a system message first, an unknown role, a missing max_tokens and unknown top-level fields', async () => {
    const system = await refusal({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'system', content: 'be brief' }, ask],
    });
    expect(system).toMatchObject({
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringMatching(/^messages\.0: .*first message/) },
      },
    });
    const role = await refusal({ model: 'm', max_tokens: 10, messages: [ask, { role: 'tool', content: 'x' }] });
    expect(role).toMatchObject({
      status: 400,
      body: { error: { message: "messages.1.role: Input should be 'user', 'assistant' or 'system'" } },
    });
    const noMax = await refusal({ model: 'm', messages: [ask] });
    expect(noMax).toMatchObject({ status: 400, body: { error: { message: 'max_tokens: Field required' } } });
    const extra = await refusal({
      model: 'm',
      max_tokens: 10,
      messages: [ask],
      stream_options: { include_usage: true },
    });
    expect(extra).toMatchObject({
      status: 400,
      body: { error: { message: 'stream_options: Extra inputs are not permitted' } },
    });
    const countExtra = await refusal({ model: 'm', max_tokens: 10, messages: [ask] }, '/v1/messages/count_tokens');
    expect(countExtra).toMatchObject({
      status: 400,
      body: { error: { message: 'max_tokens: Extra inputs are not permitted' } },
    });
  });

  it('refuses empty text blocks and tool_use ids outside [a-zA-Z0-9_-]', async () => {
    const empty = await refusal({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }],
    });
    expect(empty).toMatchObject({
      status: 400,
      body: { error: { message: 'messages.0.content.0.text: text content blocks must be non-empty' } },
    });
    const badId = { role: 'assistant', content: [{ type: 'tool_use', id: 'call.1', name: 'get_weather', input: {} }] };
    const id = await refusal({ model: 'm', max_tokens: 10, tools, messages: [ask, badId, result('call.1')] });
    expect(id.status).toBe(400);
  });

  it('keeps accepting what the real API accepts: a top-level system, metadata, thinking, cache_control', async () => {
    const reply = await anthropicClient(sim).messages.create({
      model: 'm',
      max_tokens: 2000,
      system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
      metadata: { user_id: 'u1' },
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [ask, { role: 'assistant', content: 'Sure' }, { role: 'user', content: 'go on' }],
    });
    expect(reply.type).toBe('message');
  });
});

describe('OpenAI Chat Completions rules', () => {
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: weatherSchema } }];
  const calls = (...ids: string[]) => ({
    role: 'assistant' as const,
    content: null,
    tool_calls: ids.map((id) => ({
      id,
      type: 'function' as const,
      function: { name: 'get_weather', arguments: '{}' },
    })),
  });
  const tool = (id: string) => ({ role: 'tool' as const, tool_call_id: id, content: 'sunny' });
  const ask = { role: 'user' as const, content: 'weather in Paris?' };

  it(
    'accepts tool messages answering each call of the ' + 'assistant message they follow, system messages anywhere',
    async () => {
      const reply = await openAiClient(sim).chat.completions.create({
        model: 'm',
        tools,
        messages: [
          { role: 'system', content: 'a' },
          ask,
          { role: 'developer', content: 'b' },
          calls('call_1', 'call_2'),
          tool('call_2'),
          tool('call_1'),
        ],
      });
      expect(reply.choices[0]!.message.content).toContain('tool result');
    },
  );

  it('refuses a tool message that answers no preceding tool_calls, in OpenAI’s error shape', async () => {
    const failure = await openAiClient(sim)
      .chat.completions.create({ model: 'm', tools, messages: [ask, calls('call_1'), tool('call_9')] })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      message: expect.stringContaining(
        "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
      ),
      type: 'invalid_request_error',
      param: 'messages.[2].role',
    });
  });

  it('refuses tool_calls left unanswered before the next turn', async () => {
    const failure = (await openAiClient(sim)
      .chat.completions.create({ model: 'm', tools, messages: [ask, calls('call_1', 'call_2'), tool('call_1'), ask] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(failure.status).toBe(400);
    expect(failure.message).toContain('did not have response messages: call_2');
  });
});

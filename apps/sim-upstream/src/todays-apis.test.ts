import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { RunningSim } from './main';
import { anthropicClient, openAiClient, startSim, weatherSchema } from './test-support';

/**
 * The simulator speaks the providers' APIs as today's coding agents use them (dialects.md §9): what the real
 * APIs take passes (mid-conversation system messages, adaptive thinking, effort, context management, namespace
 * and custom tools), what they refuse is refused, and `sim:call:` still drives the tool loop.
 */

let sim: RunningSim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(() => sim.stop());

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

describe('Anthropic Messages as Claude Code sends it', () => {
  const tools = [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }];
  const ask = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
  const system = {
    role: 'system',
    content: [{ type: 'text', text: 'Environment: a test.', cache_control: { type: 'ephemeral' } }],
  };
  const claudeCode = (messages: unknown[]) => ({
    model: 'm',
    max_tokens: 32000,
    stream: false,
    system: [{ type: 'text', text: 'You are an agent.', cache_control: { type: 'ephemeral' } }],
    messages,
    tools,
    metadata: { user_id: '{"device_id":"d"}' },
    thinking: { type: 'adaptive', display: 'omitted' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    output_config: { effort: 'high' },
  });

  it('takes a system message after the first user turn, and sim:call: calls the named tool', async () => {
    const { status, body } = await post(
      '/v1/messages',
      claudeCode([ask('sim:call:Bash {"command":"echo hi"}'), system]),
    );
    expect(status).toBe(200);
    expect(body.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'Bash', input: { command: 'echo hi' } },
    ]);
  });

  it('answers the tool result of a loop whose system message sits before the assistant turn, or last', async () => {
    const use = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo hi' } }],
    };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hi' }] };
    for (const messages of [
      [ask('sim:call:Bash'), system, use, result],
      [ask('sim:call:Bash'), use, result, system],
    ]) {
      const { status, body } = await post('/v1/messages', claudeCode(messages));
      expect(status).toBe(200);
      expect(body.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('tool result: hi') });
    }
  });

  it('counts tokens of the same body (count_tokens takes what Messages takes but max_tokens and stream)', async () => {
    const { max_tokens: _limit, stream: _stream, metadata: _metadata, ...count } = claudeCode([ask('x'), system]);
    const { status, body } = await post('/v1/messages/count_tokens', count);
    expect(status).toBe(200);
    expect(body.input_tokens).toBeGreaterThan(0);
  });

  it('refuses a system message where Anthropic does: first, after the assistant, before a user, twice', async () => {
    const cases: Array<[unknown[], string]> = [
      [[system, ask('x')], 'messages.0: '],
      [[ask('x'), { role: 'assistant', content: 'y' }, system], 'messages.2: a system message must follow a user'],
      [[ask('x'), system, ask('y')], 'messages.1: a system message must be the last message'],
      [[ask('x'), system, system], 'messages.1: a system message must be the last message'],
      [[ask('x'), { role: 'system', content: [{ type: 'image' }] }], 'messages.1.content.0.type'],
      [[ask('x'), { role: 'system', content: '' }], 'messages.1.content'],
    ];
    for (const [messages, message] of cases) {
      const { status, body } = await post('/v1/messages', claudeCode(messages));
      expect(status).toBe(400);
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(body.error.message).toContain(message);
    }
  });

  it('refuses a thinking budget not below max_tokens or under 1024, an unknown thinking type and effort', async () => {
    const base = { model: 'm', messages: [ask('x')] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 } },
        '`max_tokens` must be greater than `thinking.budget_tokens`',
      ],
      [{ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1000 } }, 'greater than or equal to 1024'],
      [{ max_tokens: 4000, thinking: { type: 'sometimes' } }, 'thinking.type'],
      [{ max_tokens: 4000, output_config: { effort: 'extreme' } }, 'output_config.effort'],
    ];
    for (const [fields, message] of cases) {
      const { status, body } = await post('/v1/messages', { ...base, ...fields });
      expect(status).toBe(400);
      expect(body.error.message).toContain(message);
    }
  });

  it('takes every effort Anthropic knows and the fields of its current API, through the official SDK', async () => {
    const client: Anthropic = anthropicClient(sim);
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max'] as const) {
      const reply = await client.messages.create({
        model: 'm',
        max_tokens: 100,
        messages: [ask('hi'), system as unknown as Anthropic.MessageParam],
        thinking: { type: 'adaptive' },
        output_config: { effort },
        cache_control: { type: 'ephemeral' },
        speed: 'standard',
      } as Anthropic.MessageCreateParamsNonStreaming);
      expect(reply.type).toBe('message');
    }
  });
});

describe('OpenAI Responses as Codex sends it', () => {
  const namespaceTool = {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Sub-agents.',
    tools: [
      { type: 'function', name: 'spawn_agent', strict: false, parameters: { type: 'object', properties: {} } },
      {
        type: 'function',
        name: 'wait_agent',
        strict: false,
        parameters: { type: 'object', properties: { targets: { type: 'array', items: { type: 'string' } } } },
      },
    ],
  };
  const codex = (input: unknown[], extra: Record<string, unknown> = {}) =>
    ({
      model: 'm',
      input,
      tools: [
        { type: 'function', name: 'exec_command', strict: false, parameters: weatherSchema },
        namespaceTool,
        { type: 'custom', name: 'apply_patch', description: 'Patch files.', format: { type: 'text' } },
        { type: 'web_search', external_web_access: false },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      client_metadata: { turn_id: 't' },
      ...extra,
    }) as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  const developer = { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be careful.' }] };

  it('calls a namespaced function as a function_call carrying its namespace, by name or namespace.name', async () => {
    for (const directive of ['sim:call:wait_agent', 'sim:call:multi_agent_v1.wait_agent']) {
      const reply = await openAiClient(sim).responses.create(
        codex([developer, user(`${directive} {"targets":["a"]}`)]),
      );
      expect(reply.output).toEqual([
        {
          type: 'function_call',
          id: expect.stringMatching(/^fc_/),
          call_id: expect.any(String),
          name: 'wait_agent',
          namespace: 'multi_agent_v1',
          arguments: '{"targets":["a"]}',
          status: 'completed',
        },
      ]);
    }
  });

  it('streams a custom tool call as custom_tool_call_input events and a custom_tool_call item', async () => {
    const stream = await openAiClient(sim).responses.create({
      ...codex([user('sim:call:apply_patch {"input":"*** Begin Patch"}')]),
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      ...events.filter((event) => event.type === 'response.custom_tool_call_input.delta').map((event) => event.type),
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = events.find((event) => event.type === 'response.output_item.done');
    expect(done?.type === 'response.output_item.done' && done.item).toMatchObject({
      type: 'custom_tool_call',
      name: 'apply_patch',
      input: '*** Begin Patch',
    });
  });

  it('answers the output of a namespaced call, with a developer message after it', async () => {
    const reply = await openAiClient(sim).responses.create(
      codex([
        user('sim:call:wait_agent'),
        { type: 'function_call', call_id: 'call_1', name: 'wait_agent', namespace: 'multi_agent_v1', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'agent a finished' },
        developer,
      ]),
    );
    expect(reply.output_text).toContain('tool result: agent a finished');
  });

  it('refuses a reasoning effort OpenAI does not know, as OpenAI does', async () => {
    const failure = await openAiClient(sim)
      .responses.create(codex([user('x')], { reasoning: { effort: 'extreme' } }))
      .catch((error: unknown) => error as { status?: number; message?: string });
    expect(failure).toMatchObject({ status: 400, message: expect.stringContaining('reasoning.effort') });
    const chat = await openAiClient(sim)
      .chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        reasoning_effort: 'extreme' as 'high',
      })
      .catch((error: unknown) => error as { status?: number; message?: string });
    expect(chat).toMatchObject({ status: 400, message: expect.stringContaining('reasoning_effort') });
  });
});

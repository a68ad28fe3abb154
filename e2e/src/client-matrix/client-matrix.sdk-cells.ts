import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AFTER_TOOL, QUESTION, TOOL_RESULT, WEATHER_SCHEMA, type Cell, type CellContext } from './client-matrix.cells';

/** The official SDKs' cells: `openai` on chat completions and Responses, `@anthropic-ai/sdk` on Messages. */

/** A refusal as the OpenAI SDK surfaces it: a 400 BadRequestError whose message says what to do instead. */
async function refusedByOpenAi(call: Promise<unknown>, says: RegExp): Promise<void> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(says);
}

const openAi = (ctx: CellContext) => new OpenAI({ apiKey: ctx.apiKey, baseURL: `${ctx.edgeUrl}/v1`, maxRetries: 0 });
const anthropic = (ctx: CellContext) => new Anthropic({ apiKey: ctx.apiKey, baseURL: ctx.edgeUrl, maxRetries: 0 });

const chatTools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather for a city', parameters: WEATHER_SCHEMA },
  },
];
const responsesTools: OpenAI.Responses.FunctionTool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: WEATHER_SCHEMA,
    strict: true,
  },
];
const messagesTools: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather for a city', input_schema: WEATHER_SCHEMA },
];

/** A chat tool loop: the call, then the answer to its result. `first` makes the first turn (streamed or not). */
async function chatToolLoop(
  ctx: CellContext,
  first: (messages: OpenAI.Chat.ChatCompletionMessageParam[]) => Promise<OpenAI.Chat.ChatCompletion>,
) {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: QUESTION },
  ];
  const asked = await first(messages);
  const call = asked.choices[0]!.message.tool_calls?.[0];
  expect(asked.choices[0]!.finish_reason).toBe('tool_calls');
  expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
  if (call?.type !== 'function') throw new Error('no function call');
  expect(JSON.parse(call.function.arguments)).toMatchObject({ location: expect.any(String) });
  messages.push(asked.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT });
  const answered = await openAi(ctx).chat.completions.create({ model: ctx.model, messages, tools: chatTools });
  expect(answered.choices[0]!.message.content).toMatch(AFTER_TOOL);
}

async function responsesToolLoop(
  ctx: CellContext,
  first: (input: OpenAI.Responses.ResponseInputItem[]) => Promise<OpenAI.Responses.Response>,
) {
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: QUESTION }];
  const asked = await first(input);
  const call = asked.output.find((item) => item.type === 'function_call');
  expect(call).toMatchObject({ name: 'get_weather', call_id: expect.any(String) });
  if (call?.type !== 'function_call') throw new Error('no function call');
  input.push(...(asked.output as OpenAI.Responses.ResponseInputItem[]), {
    type: 'function_call_output',
    call_id: call.call_id,
    output: TOOL_RESULT,
  });
  const answered = await openAi(ctx).responses.create({ model: ctx.model, input, tools: responsesTools });
  expect(answered.output_text).toMatch(AFTER_TOOL);
}

async function messagesToolLoop(
  ctx: CellContext,
  first: (messages: Anthropic.MessageParam[]) => Promise<Anthropic.Message>,
) {
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: QUESTION }];
  const asked = await first(messages);
  const use = asked.content.find((block) => block.type === 'tool_use');
  expect(asked.stop_reason).toBe('tool_use');
  expect(use).toMatchObject({ name: 'get_weather', input: { location: expect.any(String) } });
  if (use?.type !== 'tool_use') throw new Error('no tool use');
  messages.push(
    { role: 'assistant', content: asked.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: TOOL_RESULT }] },
  );
  const answered = await anthropic(ctx).messages.create({
    model: ctx.model,
    max_tokens: 200,
    system: 'Be brief.',
    messages,
    tools: messagesTools,
  });
  expect(answered.content).toEqual([{ type: 'text', text: expect.stringMatching(AFTER_TOOL) }]);
}

export const sdkCells: Cell[] = [
  {
    client: 'openai',
    route: '/v1/chat/completions',
    call: 'chat.completions.create',
    streams: false,
    tools: true,
    run: (ctx) =>
      chatToolLoop(ctx, (messages) =>
        openAi(ctx).chat.completions.create({ model: ctx.model, messages, tools: chatTools }),
      ),
  },
  {
    client: 'openai',
    route: '/v1/chat/completions',
    call: 'chat.completions.stream',
    streams: true,
    tools: true,
    run: (ctx) =>
      chatToolLoop(ctx, (messages) =>
        openAi(ctx)
          .chat.completions.stream({
            model: ctx.model,
            messages,
            tools: chatTools,
            stream_options: { include_usage: true },
          })
          .finalChatCompletion(),
      ),
  },
  {
    client: 'openai',
    route: '/v1/chat/completions',
    call: 'chat.completions.runTools',
    streams: false,
    tools: true,
    async run(ctx) {
      let called = 0;
      const runner = openAi(ctx).chat.completions.runTools({
        model: ctx.model,
        messages: [{ role: 'user', content: QUESTION }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather for a city',
              parameters: WEATHER_SCHEMA,
              parse: JSON.parse,
              function: () => {
                called++;
                return TOOL_RESULT;
              },
            },
          },
        ],
      });
      expect(await runner.finalContent()).toMatch(AFTER_TOOL);
      expect(called).toBe(1);
    },
  },
  {
    client: 'openai',
    route: '/v1/responses',
    call: 'responses.create',
    streams: false,
    tools: true,
    run: (ctx) =>
      responsesToolLoop(ctx, (input) =>
        openAi(ctx).responses.create({ model: ctx.model, input, tools: responsesTools }),
      ),
  },
  {
    client: 'openai',
    route: '/v1/responses',
    call: 'responses.stream',
    streams: true,
    tools: true,
    run: (ctx) =>
      responsesToolLoop(ctx, (input) =>
        openAi(ctx).responses.stream({ model: ctx.model, input, tools: responsesTools }).finalResponse(),
      ),
  },
  {
    client: 'openai',
    route: '/v1/models',
    call: 'models.list',
    streams: false,
    tools: false,
    async run(ctx) {
      const ids: string[] = [];
      for await (const model of openAi(ctx).models.list()) ids.push(model.id);
      expect(ids).toContain(ctx.listedAs);
    },
  },
  {
    client: 'openai',
    route: '/v1/responses',
    call: 'responses.create with previous_response_id',
    streams: false,
    tools: true,
    // The stored turn (the question and the tool call) is put before the tool's result in the endpoint's own
    // dialect; the strict endpoints refuse a result whose call is not in the turn before it.
    async run(ctx) {
      const client = openAi(ctx);
      const asked = await client.responses.create({ model: ctx.model, input: QUESTION, tools: responsesTools });
      const call = asked.output.find((item) => item.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('no function call');
      const answered = await client.responses.create({
        model: ctx.model,
        previous_response_id: asked.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: TOOL_RESULT }],
        tools: responsesTools,
      });
      expect(answered.output_text).toMatch(AFTER_TOOL);
      expect((await client.responses.retrieve(answered.id)).previous_response_id).toBe(asked.id);
    },
  },
  {
    client: 'openai',
    route: '/v1/chat/completions',
    call: 'chat.completions.create with n > 1',
    streams: false,
    tools: false,
    // Passed through as sent to an OpenAI-dialect upstream; a translation carries one choice only.
    refusal: {
      targets: ['anthropic-endpoint'],
      why: 'a translated call carries one choice (`n` = 1); OpenAI-dialect upstreams get `n` as sent',
    },
    async run(ctx) {
      const call = openAi(ctx).chat.completions.create({
        model: ctx.model,
        messages: [{ role: 'user', content: 'hi' }],
        n: 2,
      });
      if (ctx.target === 'anthropic-endpoint') await refusedByOpenAi(call, /n = 1/);
      else expect((await call).choices[0]!.message.content).toMatch(/Simulated reply/);
    },
  },
  {
    client: '@anthropic-ai/sdk',
    route: '/v1/messages',
    call: 'messages.create',
    streams: false,
    tools: true,
    run: (ctx) =>
      messagesToolLoop(ctx, (messages) =>
        anthropic(ctx).messages.create({
          model: ctx.model,
          max_tokens: 200,
          system: 'Be brief.',
          messages,
          tools: messagesTools,
        }),
      ),
  },
  {
    client: '@anthropic-ai/sdk',
    route: '/v1/messages',
    call: 'messages.stream().finalMessage',
    streams: true,
    tools: true,
    run: (ctx) =>
      messagesToolLoop(ctx, (messages) =>
        anthropic(ctx)
          .messages.stream({ model: ctx.model, max_tokens: 200, messages, tools: messagesTools })
          .finalMessage(),
      ),
  },
  {
    client: '@anthropic-ai/sdk',
    route: '/v1/messages/count_tokens',
    call: 'messages.countTokens',
    streams: false,
    tools: true,
    async run(ctx) {
      const counted = await anthropic(ctx).messages.countTokens({
        model: ctx.model,
        messages: [{ role: 'user', content: QUESTION }],
        tools: messagesTools,
      });
      expect(counted.input_tokens).toBeGreaterThan(0);
    },
  },
  {
    client: '@anthropic-ai/sdk',
    route: '/v1/models',
    call: 'models.list',
    streams: false,
    tools: false,
    async run(ctx) {
      const ids: string[] = [];
      for await (const model of anthropic(ctx).models.list()) {
        expect(model).toMatchObject({
          type: 'model',
          display_name: expect.any(String),
          created_at: expect.any(String),
        });
        ids.push(model.id);
      }
      expect(ids).toContain(ctx.listedAs);
    },
  },
];

import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import {
  rawStream,
  TEXT_PROMPT,
  TEXT_REPLY,
  TOOL_PROMPT,
  TOOL_REPLY,
  TOOL_RESULT,
  weatherArguments,
  weatherSchema,
} from '../support/model-calls.harness';
import { anthropicFor, OWNER_KEY as KEY, openAiFor, simHouse, startStack, type Stack } from '../support/stack';

/**
 * The three caller dialects against both upstream dialects, end to end through the real edge with the official
 * SDKs: `house` is served by the sim in the OpenAI dialect, `house-omni` by the sim in the Anthropic dialect.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ label: 'model_calls', house: simHouse });
}, 60_000);
afterAll(() => stack?.stop());

interface Answer {
  id: string;
  text: string;
  /** chat finish_reason, messages stop_reason, responses `status:item types`. */
  finish: string | null;
  model: string;
  usage: { input: number; output: number; total?: number };
}
interface Streamed extends Answer {
  /** The first and last events hold what the dialect requires (role chunk/finish, created/completed, start/stop). */
  framed: boolean;
  /** Every event named the caller's model. */
  modelEverywhere: boolean;
}
interface ToolRound {
  call: { id: string; name: string; args: unknown };
  finish: string | null;
  final: Answer;
}
interface Caller {
  /** The dialect's id form (chatcmpl-…, resp_…, msg_…). */
  idPattern: RegExp;
  finishes: { text: string; tool: string };
  text(model: string): Promise<Answer>;
  streamText(model: string): Promise<Streamed>;
  toolRound(model: string, stream: boolean): Promise<ToolRound>;
}

// ——— chat completions ———
const chatTools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather for a place', parameters: weatherSchema },
  },
];
const chatAnswer = (c: OpenAI.Chat.ChatCompletion): Answer => ({
  id: c.id,
  text: c.choices[0]?.message.content ?? '',
  finish: c.choices[0]?.finish_reason ?? null,
  model: c.model,
  usage: {
    input: c.usage?.prompt_tokens ?? -1,
    output: c.usage?.completion_tokens ?? -1,
    total: c.usage?.total_tokens ?? -1,
  },
});
const chat = (): Caller => ({
  idPattern: /^chatcmpl-/,
  finishes: { text: 'stop', tool: 'tool_calls' },
  text: async (model) =>
    chatAnswer(
      await stack.openai.chat.completions.create({ model, messages: [{ role: 'user', content: TEXT_PROMPT }] }),
    ),
  async streamText(model) {
    const stream = stack.openai.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: TEXT_PROMPT }],
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.finalChatCompletion();
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    const withChoice = chunks.filter((chunk) => chunk.choices.length > 0);
    return {
      ...chatAnswer(final),
      text,
      framed:
        withChoice[0]?.choices[0]?.delta.role === 'assistant' &&
        withChoice[withChoice.length - 1]?.choices[0]?.finish_reason === 'stop' &&
        new Set(chunks.map((c) => c.id)).size === 1,
      modelEverywhere: chunks.every((chunk) => chunk.model === model),
    };
  },
  async toolRound(model, stream) {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
    const ask = (body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming) =>
      stream
        ? stack.openai.chat.completions
            .stream({ ...body, stream: true, stream_options: { include_usage: true } })
            .finalChatCompletion()
        : stack.openai.chat.completions.create(body);
    const first = await ask({ model, messages, tools: chatTools });
    const call = first.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error(`no function call in ${JSON.stringify(first)}`);
    const final = await ask({
      model,
      tools: chatTools,
      messages: [
        ...messages,
        {
          role: 'assistant',
          content: first.choices[0]?.message.content ?? null,
          tool_calls: [{ id: call.id, type: 'function', function: call.function }],
        },
        { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT },
      ],
    });
    return {
      call: { id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments) },
      finish: first.choices[0]?.finish_reason ?? null,
      final: chatAnswer(final),
    };
  },
});

// ——— responses ———
const responsesTools: OpenAI.Responses.FunctionTool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather for a place',
    parameters: weatherSchema,
    strict: false,
  },
];
const responsesAnswer = (r: OpenAI.Responses.Response): Answer => ({
  id: r.id,
  text: r.output_text,
  finish: `${r.status}:${r.output.map((item) => item.type).join(',')}`,
  model: r.model,
  usage: {
    input: r.usage?.input_tokens ?? -1,
    output: r.usage?.output_tokens ?? -1,
    total: r.usage?.total_tokens ?? -1,
  },
});
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);
const responses = (): Caller => ({
  idPattern: /^resp_/,
  finishes: { text: 'completed:message', tool: 'completed:function_call' },
  text: async (model) => responsesAnswer(await stack.openai.responses.create({ model, input: TEXT_PROMPT })),
  async streamText(model) {
    const stream = stack.openai.responses.stream({ model, input: TEXT_PROMPT });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const last = events[events.length - 1];
    return {
      ...responsesAnswer(final),
      text: events.map((event) => (event.type === 'response.output_text.delta' ? event.delta : '')).join(''),
      framed:
        events[0]?.type === 'response.created' &&
        last?.type === 'response.completed' &&
        events.filter((event) => TERMINAL.has(event.type)).length === 1,
      modelEverywhere: events.every((event) => !('response' in event) || event.response.model === model),
    };
  },
  async toolRound(model, stream) {
    const ask = (input: OpenAI.Responses.ResponseInput) =>
      stream
        ? stack.openai.responses.stream({ model, input, tools: responsesTools }).finalResponse()
        : stack.openai.responses.create({ model, input, tools: responsesTools });
    const question: OpenAI.Responses.ResponseInput = [{ role: 'user', content: TOOL_PROMPT }];
    const first = await ask(question);
    const call = first.output.find((item) => item.type === 'function_call') as
      OpenAI.Responses.ResponseFunctionToolCall | undefined;
    if (!call) throw new Error(`no function_call in ${JSON.stringify(first)}`);
    expect(call.id).toMatch(/^fc_/);
    // As Codex-style clients do: replay the output items as they came, then the call's output.
    const final = await ask([
      ...question,
      ...(first.output as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: TOOL_RESULT },
    ]);
    return {
      call: { id: call.call_id, name: call.name, args: JSON.parse(call.arguments) },
      finish: responsesAnswer(first).finish,
      final: responsesAnswer(final),
    };
  },
});

// ——— messages ———
const messagesTools: Anthropic.Tool[] = [
  {
    name: 'get_weather',
    description: 'Weather for a place',
    input_schema: weatherSchema as Anthropic.Tool.InputSchema,
  },
];
const messagesAnswer = (m: Anthropic.Message): Answer => ({
  id: m.id,
  text: m.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
  finish: m.stop_reason,
  model: m.model,
  usage: { input: m.usage.input_tokens, output: m.usage.output_tokens },
});
const messages = (): Caller => ({
  idPattern: /^msg_/,
  finishes: { text: 'end_turn', tool: 'tool_use' },
  text: async (model) =>
    messagesAnswer(
      await stack.anthropic.messages.create({
        model,
        max_tokens: 256,
        messages: [{ role: 'user', content: TEXT_PROMPT }],
      }),
    ),
  async streamText(model) {
    const stream = stack.anthropic.messages.stream({
      model,
      max_tokens: 256,
      messages: [{ role: 'user', content: TEXT_PROMPT }],
    });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const events: Anthropic.MessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalMessage();
    const start = events[0];
    return {
      ...messagesAnswer(final),
      text,
      framed:
        start?.type === 'message_start' &&
        events[events.length - 1]?.type === 'message_stop' &&
        events.filter((e) => e.type === 'message_delta').length === 1,
      modelEverywhere: start?.type === 'message_start' && start.message.model === model,
    };
  },
  async toolRound(model, stream) {
    const ask = (history: Anthropic.MessageParam[]) => {
      const body = { model, max_tokens: 256, tools: messagesTools, messages: history };
      return stream ? stack.anthropic.messages.stream(body).finalMessage() : stack.anthropic.messages.create(body);
    };
    const question: Anthropic.MessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
    const first = await ask(question);
    const use = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    if (!use) throw new Error(`no tool_use in ${JSON.stringify(first)}`);
    expect(use.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    const final = await ask([
      ...question,
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: TOOL_RESULT }] },
    ]);
    return {
      call: { id: use.id, name: use.name, args: use.input },
      finish: first.stop_reason,
      final: messagesAnswer(final),
    };
  },
});

const CALLERS: Record<string, () => Caller> = { chat, responses, messages };
const PAIRS = [
  ['chat', 'house', 'openai'],
  ['chat', 'house-omni', 'anthropic'],
  ['responses', 'house', 'openai'],
  ['responses', 'house-omni', 'anthropic'],
  ['messages', 'house', 'openai'],
  ['messages', 'house-omni', 'anthropic'],
] as const;

function expectSaneUsage(usage: Answer['usage']) {
  expect(usage.input).toBeGreaterThan(0);
  expect(usage.output).toBeGreaterThan(0);
  if (usage.total !== undefined) expect(usage.total).toBe(usage.input + usage.output);
}

/** Output tokens the sim reports for TEXT_REPLY when asked directly. */
let replyTokens: number;
beforeAll(async () => {
  const direct = await openAiFor(stack.sim.url, 'sk-test').chat.completions.create({
    model: 'sim-large',
    messages: [{ role: 'user', content: TEXT_PROMPT }],
  });
  replyTokens = direct.usage!.completion_tokens;
});

describe.each(PAIRS)('%s caller → %s (%s upstream)', (dialect, model) => {
  const caller = CALLERS[dialect]!();

  it('a prompt gets the text reply, the model id as the caller named it, sane usage and a natural stop', async () => {
    const answer = await caller.text(model);
    expect(answer).toMatchObject({
      id: expect.stringMatching(caller.idPattern),
      text: TEXT_REPLY,
      model,
      finish: caller.finishes.text,
    });
    expectSaneUsage(answer.usage);
    // The engine's own output count, whatever the dialects on either side.
    expect(answer.usage.output).toBe(replyTokens);
  });

  it(
    'a streamed reply assembles into the same text and usage, ' + 'framed by the dialect’s first and terminal events',
    async () => {
      const plain = await caller.text(model);
      const streamed = await caller.streamText(model);
      expect(streamed).toMatchObject({
        text: plain.text,
        model,
        finish: caller.finishes.text,
        framed: true,
        modelEverywhere: true,
      });
      expectSaneUsage(streamed.usage);
      expect(streamed.usage.output).toBe(plain.usage.output);
    },
  );

  it.each([false, true])(
    'a tool call (stream %s) carries id, name and parsed arguments, and its result gets a final text answer',
    async (stream) => {
      const round = await caller.toolRound(model, stream);
      expect(round.call).toEqual({ id: expect.stringMatching(/\S/), name: 'get_weather', args: weatherArguments });
      expect(round.finish).toBe(caller.finishes.tool);
      expect(round.final).toMatchObject({ text: TOOL_REPLY, model, finish: caller.finishes.text });
      expectSaneUsage(round.final.usage);
    },
  );
});

describe('stream traps', () => {
  const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({
    model,
    stream: true,
    messages: [{ role: 'user', content: TEXT_PROMPT }],
    ...extra,
  });

  it.each(['house', 'house-omni'])(
    'a chat caller that did not ask for usage never sees a usage chunk (%s)',
    async (model) => {
      const { res, frames } = await rawStream(stack.edge.url, '/v1/chat/completions', chatBody(model));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(frames.every((frame) => frame.event === undefined)).toBe(true);
      expect(frames[frames.length - 1]?.data).toBe('[DONE]');
      expect(frames.filter((frame) => frame.json?.usage)).toEqual([]);
      expect(frames.filter((frame) => frame.json && frame.json.choices?.length === 0)).toEqual([]);
      const chunks = frames.filter((frame) => frame.json).map((frame) => frame.json);
      expect(new Set(chunks.map((chunk) => `${chunk.id} ${chunk.created} ${chunk.model}`))).toEqual(
        new Set([`${chunks[0].id} ${chunks[0].created} ${model}`]),
      );
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
    },
  );

  it.each(['house', 'house-omni'])(
    'chat tool-call deltas all carry their index, the first one id, type and name (%s)',
    async (model) => {
      const { frames } = await rawStream(
        stack.edge.url,
        '/v1/chat/completions',
        chatBody(model, { messages: [{ role: 'user', content: TOOL_PROMPT }], tools: chatTools }),
      );
      const deltas = frames.flatMap((frame) => frame.json?.choices?.[0]?.delta?.tool_calls ?? []);
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.every((delta: { index?: unknown }) => delta.index === 0)).toBe(true);
      expect(deltas[0]).toMatchObject({
        id: expect.stringMatching(/\S/),
        type: 'function',
        function: { name: 'get_weather' },
      });
      expect(
        JSON.parse(
          deltas.map((delta: { function?: { arguments?: string } }) => delta.function?.arguments ?? '').join(''),
        ),
      ).toEqual(weatherArguments);
      expect(frames.find((frame) => frame.json?.choices?.[0]?.finish_reason)?.json.choices[0].finish_reason).toBe(
        'tool_calls',
      );
    },
  );

  it.each(['house', 'house-omni'])(
    'a chat caller that asked for usage sees exactly one usage chunk, last before [DONE] (%s)',
    async (model) => {
      const { frames } = await rawStream(
        stack.edge.url,
        '/v1/chat/completions',
        chatBody(model, { stream_options: { include_usage: true } }),
      );
      const withUsage = frames.filter((frame) => frame.json?.usage);
      expect(withUsage).toHaveLength(1);
      expect(frames[frames.length - 1]?.data).toBe('[DONE]');
      const usageChunk = frames[frames.length - 2]?.json;
      expect(usageChunk).toBe(withUsage[0]!.json);
      expect(usageChunk.choices).toEqual([]);
      expect(usageChunk.usage.prompt_tokens).toBeGreaterThan(0);
      expect(usageChunk.usage.completion_tokens).toBeGreaterThan(0);
      expect(usageChunk.usage.total_tokens).toBe(usageChunk.usage.prompt_tokens + usageChunk.usage.completion_tokens);
    },
  );

  it.each([
    ['house', TEXT_PROMPT],
    ['house-omni', TEXT_PROMPT],
    ['house', TOOL_PROMPT],
    ['house-omni', TOOL_PROMPT],
  ])(
    'every Anthropic stream frame has an event: line naming its type, message_start first and message_stop last (%s, ' +
      '%s)',
    async (model, prompt) => {
      const { res, frames, text } = await rawStream(
        stack.edge.url,
        '/v1/messages',
        { model, max_tokens: 256, stream: true, tools: messagesTools, messages: [{ role: 'user', content: prompt }] },
        { 'anthropic-version': '2023-06-01' },
      );
      expect(res.status).toBe(200);
      expect(frames.filter((frame) => frame.event === undefined || frame.event !== frame.json?.type)).toEqual([]);
      expect(frames[0]?.event).toBe('message_start');
      expect(frames[frames.length - 1]?.event).toBe('message_stop');
      expect(text).not.toContain('[DONE]');
      const starts = frames.filter((frame) => frame.event === 'content_block_start').map((frame) => frame.json.index);
      const stops = frames.filter((frame) => frame.event === 'content_block_stop').map((frame) => frame.json.index);
      expect(stops).toEqual(starts);
      expect(starts).toEqual(starts.map((_: number, i: number) => i));
      const tool = prompt === TOOL_PROMPT;
      // A tool-only answer opens its tool_use at index 0, with no empty text block before it.
      expect(frames.find((frame) => frame.event === 'content_block_start')?.json.content_block.type).toBe(
        tool ? 'tool_use' : 'text',
      );
      const delta = frames.filter((frame) => frame.event === 'message_delta');
      expect(delta).toHaveLength(1);
      expect(delta[0]!.json.delta.stop_reason).toBe(tool ? 'tool_use' : 'end_turn');
      expect(delta[0]!.json.usage.output_tokens).toBeGreaterThan(0);
      expect(frames[0]!.json.message).toMatchObject({ model, content: [], stop_reason: null });
    },
  );

  it.each([
    ['house', TEXT_PROMPT],
    ['house-omni', TEXT_PROMPT],
    ['house', TOOL_PROMPT],
    ['house-omni', TOOL_PROMPT],
  ])(
    'a Responses stream numbers its events from 0 without gaps, names each in event:, closes every item it adds and ' +
      'ends on one terminal event without [DONE] (%s, %s)',
    async (model, input) => {
      const { res, frames, text } = await rawStream(stack.edge.url, '/v1/responses', {
        model,
        stream: true,
        input,
        tools: responsesTools,
      });
      expect(res.status).toBe(200);
      expect(frames.map((frame) => frame.json?.sequence_number)).toEqual(frames.map((_, i) => i));
      expect(frames.filter((frame) => frame.event !== frame.json?.type)).toEqual([]);
      expect(text).not.toContain('[DONE]');
      expect(frames.filter((frame) => TERMINAL.has(frame.event ?? ''))).toHaveLength(1);
      expect(frames[frames.length - 1]?.event).toBe('response.completed');
      const added = frames
        .filter((frame) => frame.event === 'response.output_item.added')
        .map((frame) => frame.json.item.id);
      const done = frames
        .filter((frame) => frame.event === 'response.output_item.done')
        .map((frame) => frame.json.item);
      expect(done.map((item) => item.id)).toEqual(added);
      const final = frames[frames.length - 1]!.json.response;
      expect(final).toMatchObject({ object: 'response', status: 'completed', model, id: frames[0]!.json.response.id });
      expect(final.output).toEqual(done);
      expect(final.usage.output_tokens).toBeGreaterThan(0);
      expect(done.map((item) => item.type)).toEqual([input === TOOL_PROMPT ? 'function_call' : 'message']);
    },
  );
});

describe('count_tokens', () => {
  const request = {
    messages: [{ role: 'user' as const, content: TEXT_PROMPT }],
    system: 'Be brief.',
    tools: messagesTools,
  };

  it.each(['house', 'house-omni'])(
    'counts through the SDK, its beta namespace and a raw ?beta=true call alike (%s)',
    async (model) => {
      const counted = await stack.anthropic.messages.countTokens({ model, ...request });
      expect(Number.isInteger(counted.input_tokens)).toBe(true);
      expect(counted.input_tokens).toBeGreaterThan(0);
      const beta = await stack.anthropic.beta.messages.countTokens({ model, ...request });
      expect(beta.input_tokens).toBe(counted.input_tokens);
      const res = await fetch(`${stack.edge.url}/v1/messages/count_tokens?beta=true`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model, ...request }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ input_tokens: counted.input_tokens });
    },
  );

  it('an Anthropic-dialect house engine does the counting itself', async () => {
    const direct = await anthropicFor(stack.sim.url, 'sk-ant-test').messages.countTokens({
      model: 'sim-large',
      ...request,
    });
    const viaEdge = await stack.anthropic.messages.countTokens({ model: 'house-omni', ...request });
    expect(viaEdge.input_tokens).toBe(direct.input_tokens);
  });
});

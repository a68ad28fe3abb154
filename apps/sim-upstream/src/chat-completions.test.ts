import type OpenAI from 'openai';
import type { RunningSim } from './main';
import { openAiClient, startSim, weatherArguments, weatherSchema } from './test-support';

let sim: RunningSim;
let client: OpenAI;
beforeAll(async () => {
  sim = await startSim();
  client = openAiClient(sim);
});
afterAll(() => sim.stop());

const hello: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello there, how are you today?' },
];
const weatherTools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather for a place', parameters: weatherSchema },
  },
];

describe('POST /v1/chat/completions', () => {
  it('answers deterministically from the last user message, echoes the model and labels itself simulated', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'house-model-x', messages: hello })
      .withResponse();
    expect(response.headers.get('x-sim-upstream')).toBe('1');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(data).toMatchObject({ object: 'chat.completion', model: 'house-model-x' });
    expect(data.id).toMatch(/^chatcmpl-/);
    const choice = data.choices[0]!;
    expect(choice.message).toMatchObject({
      role: 'assistant',
      content: 'Simulated reply to: Hello there, how are you today?',
    });
    expect(choice.finish_reason).toBe('stop');
    // 9 + 31 characters of prompt text → 40 / 4 = 10 tokens in; 9 word pieces out.
    expect(data.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 });
  });

  it(
    'streams a role chunk, content deltas, a finish chunk ' + 'and [DONE], with one id and no usage unless asked',
    async () => {
      const stream = await client.chat.completions.create({ model: 'sim-small', messages: hello, stream: true });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
      expect(new Set(chunks.map((c) => c.created)).size).toBe(1);
      expect(chunks[0]!.choices[0]!.delta).toMatchObject({ role: 'assistant', content: '' });
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe('Simulated reply to: Hello there, how are you today?');
      const last = chunks[chunks.length - 1]!;
      expect(last.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
      expect(chunks.every((c) => c.usage === undefined && c.object === 'chat.completion.chunk')).toBe(true);
    },
  );

  it('adds one usage chunk with empty choices after the finish chunk when include_usage is set', async () => {
    const stream = await client.chat.completions.create({
      model: 'sim-small',
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const usageChunk = chunks[chunks.length - 1]!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 });
    expect(chunks[chunks.length - 2]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('cuts the reply at max_completion_tokens (or max_tokens) with finish_reason length', async () => {
    const cut = await client.chat.completions.create({ model: 'sim-large', messages: hello, max_completion_tokens: 3 });
    expect(cut.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'Simulated reply to:' } });
    expect(cut.usage?.completion_tokens).toBe(3);

    const stream = await client.chat.completions.create({
      model: 'sim-large',
      messages: hello,
      max_tokens: 2,
      stream: true,
    });
    const deltas: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(deltas).toEqual(['Simulated', ' reply']);
    expect(finish).toBe('length');
  });

  it('ends the reply before a stop sequence with finish_reason stop', async () => {
    const data = await client.chat.completions.create({ model: 'sim-large', messages: hello, stop: ['how', 'zzz'] });
    expect(data.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: 'Simulated reply to: Hello there, ' },
    });
  });

  it('answers a weather question with a call to the first tool and JSON-string arguments', async () => {
    const data = await client.chat.completions.create({
      model: 'sim-large',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: weatherTools,
    });
    const choice = data.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls![0]!;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(call.id).toMatch(/^call_/);
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(JSON.parse(call.function.arguments)).toEqual(weatherArguments);
  });

  it('streams tool-call argument deltas that the SDK stream helper assembles into the same call', async () => {
    const stream = client.chat.completions.stream({
      model: 'sim-large',
      messages: [{ role: 'user', content: 'weather in Paris please' }],
      tools: weatherTools,
    });
    const done: { name: string; index: number; arguments: string }[] = [];
    stream.on('tool_calls.function.arguments.done', (event) => done.push(event));
    let argumentDeltas = 0;
    stream.on('chunk', (chunk) => {
      if (chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments) argumentDeltas += 1;
    });
    const completion = await stream.finalChatCompletion();
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ name: 'get_weather', index: 0 });
    expect(JSON.parse(done[0]!.arguments)).toEqual(weatherArguments);
    expect(argumentDeltas).toBeGreaterThan(1);
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    const call = completion.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(JSON.parse(call.function.arguments)).toEqual(weatherArguments);
  });

  it('answers a tool result with text that mentions the result', async () => {
    const data = await client.chat.completions.create({
      model: 'sim-large',
      tools: weatherTools,
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18 degrees and cloudy' },
      ],
    });
    expect(data.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: 'Simulated reply using the tool result: 18 degrees and cloudy' },
    });
  });

  it('does not call a tool when tool_choice is none', async () => {
    const data = await client.chat.completions.create({
      model: 'sim-large',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: weatherTools,
      tool_choice: 'none',
    });
    expect(data.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: 'Simulated reply to: weather?' },
    });
  });
});

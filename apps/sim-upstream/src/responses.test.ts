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

const weatherTools: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'get_weather', parameters: weatherSchema, strict: false },
];

async function collect(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>) {
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('POST /v1/responses', () => {
  it('answers deterministically with a completed message item and usage, echoing the model', async () => {
    const response = await client.responses.create({
      model: 'house-model-y',
      instructions: 'Be brief.',
      input: 'Tell me a story',
    });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'house-model-y',
      instructions: 'Be brief.',
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('Simulated reply to: Tell me a story');
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    // 9 + 15 characters → 6 tokens in; 7 pieces out.
    expect(response.usage).toMatchObject({
      input_tokens: 6,
      output_tokens: 7,
      total_tokens: 13,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it(
    'streams the full text event sequence with contiguous ' + 'sequence numbers and a completed terminal event',
    async () => {
      const events = await collect(
        await client.responses.create({ model: 'sim-small', input: 'Tell me a story', stream: true }),
      );
      const types = events.map((e) => e.type);
      const deltas = types.filter((t) => t === 'response.output_text.delta').length;
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...Array<string>(deltas).fill('response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(deltas).toBe(7);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const completed = events[events.length - 1] as OpenAI.Responses.ResponseCompletedEvent;
      expect(completed.response.usage).toMatchObject({ input_tokens: 4, output_tokens: 7 });
    },
  );

  it('assembles into the same text through the SDK stream helper', async () => {
    const stream = client.responses.stream({
      model: 'sim-small',
      input: [{ role: 'user', content: 'Tell me a story' }],
    });
    let snapshot = '';
    stream.on('response.output_text.delta', (event) => (snapshot = event.snapshot));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Simulated reply to: Tell me a story');
    expect(snapshot).toBe(final.output_text);
  });

  it('stops at max_output_tokens with status incomplete and a response.incomplete terminal event', async () => {
    const cut = await client.responses.create({ model: 'sim-large', input: 'Tell me a story', max_output_tokens: 4 });
    expect(cut).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output_text: 'Simulated reply to: Tell',
    });
    expect(cut.usage?.output_tokens).toBe(4);

    const events = await collect(
      await client.responses.create({
        model: 'sim-large',
        input: 'Tell me a story',
        max_output_tokens: 4,
        stream: true,
      }),
    );
    expect(events.filter((e) => e.type === 'response.output_text.delta')).toHaveLength(4);
    const terminal = events[events.length - 1]!;
    expect(terminal.type).toBe('response.incomplete');
    expect(events.filter((e) => e.type === 'response.completed')).toHaveLength(0);
  });

  it('answers a weather question with a function_call item carrying call_id and JSON arguments', async () => {
    const response = await client.responses.create({
      model: 'sim-large',
      input: 'What is the weather in Rome?',
      tools: weatherTools,
    });
    const call = response.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toMatch(/^call_/);
    expect(JSON.parse(call.arguments)).toEqual(weatherArguments);
  });

  it('streams function-call argument deltas that assemble into the final arguments', async () => {
    const stream = client.responses.stream({ model: 'sim-large', input: 'weather in Rome?', tools: weatherTools });
    const deltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    const call = final.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(call.arguments);
    expect(JSON.parse(call.arguments)).toEqual(weatherArguments);
    expect(final.usage?.output_tokens).toBe(deltas.length);
  });

  it('answers a function_call_output with text that mentions the result', async () => {
    const response = await client.responses.create({
      model: 'sim-large',
      tools: weatherTools,
      input: [
        { role: 'user', content: 'What is the weather in Rome?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"location":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'hot and sunny' },
      ],
    });
    expect(response.output_text).toBe('Simulated reply using the tool result: hot and sunny');
  });

  it('counts input tokens with the same estimate as the reply usage', async () => {
    const counted = await client.responses.inputTokens.count({
      model: 'sim-large',
      input: 'Tell me a story',
      instructions: 'Be brief.',
    });
    expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: 6 });
  });
});

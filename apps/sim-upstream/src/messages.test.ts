import type Anthropic from '@anthropic-ai/sdk';
import type { RunningSim } from './main';
import { anthropicClient, startSim, weatherArguments, weatherSchema } from './test-support';

let sim: RunningSim;
let client: Anthropic;
beforeAll(async () => {
  sim = await startSim();
  client = anthropicClient(sim);
});
afterAll(() => sim.stop());

const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello there, how are you today?' }];
const weatherTools: Anthropic.Tool[] = [
  {
    name: 'get_weather',
    description: 'Weather for a place',
    input_schema: weatherSchema as Anthropic.Tool.InputSchema,
  },
];

describe('POST /v1/messages', () => {
  it('answers deterministically with a text block, end_turn and usage, echoing the model', async () => {
    const { data, response } = await client.messages
      .create({ model: 'claude-house', max_tokens: 100, system: 'Be brief.', messages: hello })
      .withResponse();
    expect(response.headers.get('x-sim-upstream')).toBe('1');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-house',
      stop_reason: 'end_turn',
      stop_sequence: null,
      content: [{ type: 'text', text: 'Simulated reply to: Hello there, how are you today?' }],
    });
    expect(data.id).toMatch(/^msg_/);
    expect(data.usage).toMatchObject({
      input_tokens: 10,
      output_tokens: 9,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it('streams message_start, one text block, ping, deltas, message_delta and message_stop in order', async () => {
    const stream = await client.messages.create({ model: 'sim-small', max_tokens: 100, messages: hello, stream: true });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    // The SDK drops `ping` frames, so the remaining order is fixed.
    const types = events.map((e) => e.type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      ...Array<string>(9).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const start = events[0] as Anthropic.RawMessageStartEvent;
    expect(start.message).toMatchObject({ content: [], stop_reason: null, usage: { input_tokens: 8 } });
    const delta = events[events.length - 2] as Anthropic.RawMessageDeltaEvent;
    expect(delta).toMatchObject({
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 9 },
    });
  });

  it('sends a ping frame and an event: line on every frame', async () => {
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'sim-small', max_tokens: 5, stream: true, messages: hello }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await response.text()).trim().split('\n\n');
    expect(frames.every((frame) => /^event: (\w+)\ndata: \{"type":"\1"/.test(frame))).toBe(true);
    expect(frames[2]).toBe('event: ping\ndata: {"type":"ping"}');
  });

  it('assembles the streamed text through the SDK MessageStream helper', async () => {
    const stream = client.messages.stream({ model: 'sim-small', max_tokens: 100, messages: hello });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Simulated reply to: Hello there, how are you today?' }]);
    expect(text).toBe('Simulated reply to: Hello there, how are you today?');
    expect(final.usage).toMatchObject({ input_tokens: 8, output_tokens: 9 });
  });

  it('stops at max_tokens with stop_reason max_tokens, streamed or not', async () => {
    const cut = await client.messages.create({ model: 'sim-large', max_tokens: 2, messages: hello });
    expect(cut).toMatchObject({
      stop_reason: 'max_tokens',
      content: [{ type: 'text', text: 'Simulated reply' }],
      usage: { output_tokens: 2 },
    });
    const final = await client.messages.stream({ model: 'sim-large', max_tokens: 2, messages: hello }).finalMessage();
    expect(final).toMatchObject({
      stop_reason: 'max_tokens',
      content: [{ type: 'text', text: 'Simulated reply' }],
      usage: { output_tokens: 2 },
    });
  });

  it('ends before a stop sequence and reports it', async () => {
    const data = await client.messages.create({
      model: 'sim-large',
      max_tokens: 100,
      messages: hello,
      stop_sequences: ['how'],
    });
    expect(data).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'how',
      content: [{ type: 'text', text: 'Simulated reply to: Hello there, ' }],
    });
  });

  it('answers a weather question with a tool_use block whose input is an object', async () => {
    const data = await client.messages.create({
      model: 'sim-large',
      max_tokens: 100,
      tools: weatherTools,
      messages: [{ role: 'user', content: 'What is the weather in Lima?' }],
    });
    expect(data.stop_reason).toBe('tool_use');
    const block = data.content[0] as Anthropic.ToolUseBlock;
    expect(block).toMatchObject({ type: 'tool_use', name: 'get_weather', input: weatherArguments });
    expect(block.id).toMatch(/^toolu_/);
  });

  it('streams input_json_delta pieces that the MessageStream helper parses into the tool input', async () => {
    const stream = client.messages.stream({
      model: 'sim-large',
      max_tokens: 100,
      tools: weatherTools,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'weather in Lima?' }] }],
    });
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const final = await stream.finalMessage();
    expect(partials.length).toBeGreaterThan(1);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: weatherArguments }),
    ]);
    expect(final.usage.output_tokens).toBe(partials.length);
  });

  it('answers a tool_result with text that mentions the result', async () => {
    const data = await client.messages.create({
      model: 'sim-large',
      max_tokens: 100,
      tools: weatherTools,
      messages: [
        { role: 'user', content: 'What is the weather in Lima?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Lima' } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'foggy, 16 degrees' }] },
          ],
        },
      ],
    });
    expect(data).toMatchObject({
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'Simulated reply using the tool result: foggy, 16 degrees' }],
    });
  });
});

describe('Anthropic beta namespace (?beta=true)', () => {
  it('routes on the path and ignores the query string', async () => {
    const data = await client.beta.messages.create({ model: 'sim-large', max_tokens: 50, messages: hello });
    expect(data.content).toEqual([
      expect.objectContaining({ text: 'Simulated reply to: Hello there, how are you today?' }),
    ]);
    const counted = await client.beta.messages.countTokens({ model: 'sim-large', messages: hello });
    expect(counted.input_tokens).toBe(8);
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('counts the same input tokens the reply usage reports', async () => {
    const request = { model: 'sim-large', system: 'Be brief.', messages: hello, tools: weatherTools };
    const counted = await client.messages.countTokens(request);
    const reply = await client.messages.create({ ...request, max_tokens: 10 });
    expect(counted.input_tokens).toBe(reply.usage.input_tokens);
    expect(counted.input_tokens).toBeGreaterThan(10);
  });
});

import { fromChatCompletions, fromMessages, fromResponses, type Conversation } from './conversation';
import { exampleArguments, planReply } from './reply';

const ask = (lastUserText: string, extra: Partial<Conversation> = {}): Conversation => ({
  lastUserText,
  toolResult: undefined,
  tools: [],
  toolChoice: { mode: 'auto' },
  ...extra,
});
const noLimits = { maxTokens: undefined, stop: [] };
const weatherTool = { name: 'get_weather', schema: { type: 'object', properties: { city: { type: 'string' } } } };

describe('planReply', () => {
  it('answers the same conversation with the same pieces, naming the prompt and saying it is simulated', () => {
    const first = planReply(ask('hello there, simulator'), noLimits);
    expect(first).toEqual(planReply(ask('hello there, simulator'), noLimits));
    expect(first).toMatchObject({ kind: 'text', finish: 'end', stopSequence: null });
    expect(first.pieces.join('')).toBe('Simulated reply to: hello there, simulator');
    expect(first.pieces).toHaveLength(6);
  });

  it('never emits more pieces than the token limit and says the reply was cut', () => {
    const plan = planReply(ask('one two three four five'), { maxTokens: 2, stop: [] });
    expect(plan).toMatchObject({ kind: 'text', finish: 'length', pieces: ['Simulated', ' reply'] });
    expect(planReply(ask('x'), { maxTokens: 0, stop: [] })).toMatchObject({ pieces: [], finish: 'length' });
  });

  it('ends the text before the earliest stop sequence and reports which one matched', () => {
    const plan = planReply(ask('alpha beta gamma'), { maxTokens: undefined, stop: ['gamma', 'beta'] });
    expect(plan).toMatchObject({ kind: 'text', finish: 'stop_sequence', stopSequence: 'beta' });
    expect(plan.pieces.join('')).toBe('Simulated reply to: alpha ');
  });

  it('lets the token limit win when it comes before the stop sequence', () => {
    const plan = planReply(ask('alpha beta gamma'), { maxTokens: 2, stop: ['gamma'] });
    expect(plan).toMatchObject({ finish: 'length', stopSequence: null });
  });

  it('pads to exactly N pieces when asked with sim-tokens:N', () => {
    const plan = planReply(ask('sim-tokens:50 go'), noLimits);
    expect(plan.pieces).toHaveLength(50);
    expect(plan.pieces[49]).toBe(' filler-50');
  });

  it('calls the first declared tool for a weather question, with arguments built from its schema', () => {
    const plan = planReply(ask("What's the weather in Oslo?", { tools: [weatherTool] }), noLimits);
    expect(plan).toMatchObject({ kind: 'tool', name: 'get_weather', arguments: '{"city":"simulated city"}' });
    expect(plan.pieces.join('')).toBe('{"city":"simulated city"}');
  });

  it('obeys tool_choice: none forbids a call, required or a named tool forces one', () => {
    const other = { name: 'lookup', schema: {} };
    expect(planReply(ask('weather?', { tools: [weatherTool], toolChoice: { mode: 'none' } }), noLimits).kind).toBe(
      'text',
    );
    expect(planReply(ask('hi', { tools: [weatherTool], toolChoice: { mode: 'required' } }), noLimits)).toMatchObject({
      name: 'get_weather',
    });
    expect(
      planReply(ask('hi', { tools: [weatherTool, other], toolChoice: { mode: 'required', name: 'lookup' } }), noLimits),
    ).toMatchObject({
      name: 'lookup',
      arguments: '{}',
    });
  });

  it('never cuts a tool call mid-JSON: a call that does not fit the limit becomes a cut text reply', () => {
    const plan = planReply(ask('weather please', { tools: [weatherTool] }), { maxTokens: 1, stop: [] });
    expect(plan).toMatchObject({ kind: 'text', finish: 'length', pieces: ['Simulated'] });
  });

  it('calls the tool that sim:call names with the JSON object after it, among many declared tools', () => {
    const read = { name: 'Read', schema: { type: 'object', properties: { file_path: { type: 'string' } } } };
    const tools = [weatherTool, read];
    const plan = planReply(ask('Please sim:call:Read {"file_path":"/tmp/a {b}.txt"} now', { tools }), noLimits);
    expect(plan).toMatchObject({ kind: 'tool', name: 'Read', arguments: '{"file_path":"/tmp/a {b}.txt"}' });
    // No JSON after the name: the schema's example arguments.
    expect(planReply(ask('sim:call:Read', { tools }), noLimits)).toMatchObject({
      name: 'Read',
      arguments: '{"file_path":"simulated file_path"}',
    });
    // A name the request does not declare, or JSON that does not parse, never invents a call or arguments.
    expect(planReply(ask('sim:call:Write {"a":1}', { tools }), noLimits).kind).toBe('text');
    expect(planReply(ask('sim:call:Read {"file_path": oops}', { tools }), noLimits)).toMatchObject({
      arguments: '{"file_path":"simulated file_path"}',
    });
    // The loop ends once the tool has answered.
    expect(planReply(ask('sim:call:Read {}', { tools, toolResult: 'contents' }), noLimits).kind).toBe('text');
  });

  it('answers a tool result with text that mentions the result', () => {
    const plan = planReply(ask('weather?', { tools: [weatherTool], toolResult: '21 degrees and sunny' }), noLimits);
    expect(plan.kind).toBe('text');
    expect(plan.pieces.join('')).toBe('Simulated reply using the tool result: 21 degrees and sunny');
  });

  it('quotes the first 40 words of a tool result, past a preamble such as a shell tool writes', () => {
    const preamble =
      'Chunk ID: 5ac403 Wall time: 0.1790 seconds Process exited with code 0 Original token count: 12 Output:';
    const words = Array.from({ length: 30 }, (_, i) => `w${i + 1}`);
    const plan = planReply(
      ask('run it', { tools: [weatherTool], toolResult: `${preamble}\nunique-7731 ${words.join(' ')}` }),
      noLimits,
    );
    const text = plan.pieces.join('');
    expect(text).toContain('Output: unique-7731 w1');
    expect(text).toMatch(/ w22 …$/);
  });
});

describe('exampleArguments', () => {
  it('gives one deterministic value per property, by type and enum', () => {
    const schema = {
      properties: {
        name: { type: 'string' },
        unit: { type: 'string', enum: ['c', 'f'] },
        count: { type: 'integer' },
        exact: { type: 'boolean' },
        tags: { type: 'array' },
        where: { type: 'object', properties: { lat: { type: 'number' } } },
      },
    };
    expect(exampleArguments(schema)).toEqual({
      name: 'simulated name',
      unit: 'c',
      count: 1,
      exact: true,
      tags: [],
      where: { lat: 1 },
    });
    expect(exampleArguments(undefined)).toEqual({});
  });
});

describe('structured output', () => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, celsius: { type: 'number' } },
    required: ['city', 'celsius'],
  };
  const text = (conversation: Parameters<typeof planReply>[0]) =>
    planReply(conversation, { maxTokens: undefined, stop: [] }).pieces.join('');
  const ask = [{ role: 'user', content: 'Paris?' }];

  it('answers JSON built from the schema, in each dialect spelling of the request', () => {
    const expected = { city: 'simulated city', celsius: 1 };
    expect(
      JSON.parse(
        text(
          fromChatCompletions({
            messages: ask,
            response_format: { type: 'json_schema', json_schema: { name: 'w', schema } },
          }),
        ),
      ),
    ).toEqual(expected);
    expect(
      JSON.parse(text(fromResponses({ input: ask, text: { format: { type: 'json_schema', name: 'w', schema } } }))),
    ).toEqual(expected);
    expect(
      JSON.parse(text(fromMessages({ messages: ask, output_config: { format: { type: 'json_schema', schema } } }))),
    ).toEqual(expected);
  });

  it('answers a JSON object in JSON mode', () => {
    expect(JSON.parse(text(fromChatCompletions({ messages: ask, response_format: { type: 'json_object' } })))).toEqual({
      reply: 'Simulated reply to: Paris?',
    });
  });
});

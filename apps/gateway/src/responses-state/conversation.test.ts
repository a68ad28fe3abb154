import { parseResponsesRequest, type ChatRequest } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import { checkDistinctIds, contextOf, inputItemsOf, prependContext, type Item } from './conversation';

describe('inputItemsOf: the call’s input as listed items', () => {
  it('makes a string input one user message with an input_text part and an id', () => {
    const [item, ...rest] = inputItemsOf('Hello');
    expect(rest).toEqual([]);
    expect(item).toEqual({
      id: expect.stringMatching(/^msg_[A-Za-z0-9]{24}$/),
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Hello' }],
      status: 'completed',
    });
  });

  it('keeps the caller’s ids and fields, gives every item without an id one, and lists content as parts', () => {
    const items = inputItemsOf([
      { role: 'developer', content: 'Be brief.' },
      { type: 'message', role: 'assistant', content: 'Earlier answer', id: 'msg_given' },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny', id: 7 },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'x' },
      { type: 'web_search_call', status: 'completed' },
    ]);
    expect(items).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'Be brief.' }],
        status: 'completed',
      },
      {
        id: 'msg_given',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Earlier answer', annotations: [] }],
        status: 'completed',
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        call_id: 'call_1',
        name: 'f',
        arguments: '{}',
        status: 'completed',
      },
      {
        id: expect.stringMatching(/^fco_/),
        type: 'function_call_output',
        call_id: 'call_1',
        output: 'sunny',
        status: 'completed',
      },
      { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'x' },
      { id: expect.stringMatching(/^item_/), type: 'web_search_call', status: 'completed' },
    ]);
    expect(new Set(items.map((item) => item.id)).size).toBe(items.length);
  });
});

describe('contextOf: what a continuation starts from', () => {
  it('is the stored input items, then the stored output', () => {
    const input: Item[] = [{ id: 'msg_1', type: 'message', role: 'user', content: [] }];
    const output: Item[] = [{ id: 'fc_1', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }];
    expect(contextOf(input, { output })).toEqual([...input, ...output]);
    expect(contextOf(input, {})).toEqual(input);
  });
});

describe('checkDistinctIds', () => {
  const item = (id: string): Item => ({ id, type: 'message' });

  it('passes distinct ids', () => {
    expect(() => checkDistinctIds([item('a'), item('b'), item('c')], 1)).not.toThrow();
  });

  it('refuses an item of the continued response sent again, naming where it is in input', () => {
    let refused: unknown;
    try {
      checkDistinctIds([item('a'), item('b'), item('c'), item('a')], 2);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'invalid_request', param: 'input.1.id' });
    expect((refused as ApiError).message).toMatch(/already part of the response previous_response_id names/);
  });

  it('refuses two input items with one id', () => {
    expect(() => checkDistinctIds([item('a'), item('b'), item('b')], 1)).toThrow(/each input item needs its own id/);
  });
});

describe('prependContext: the continued response’s turns before the call’s own', () => {
  const stored: Item[] = [
    { id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Use the tool.' }] },
    { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ];

  it('keeps the call’s own instructions first and joins the result to the stored tool call', () => {
    const request = parseResponsesRequest({
      model: 'm',
      instructions: 'Be brief.',
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
    });
    prependContext(request, stored);
    expect(request.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Use the tool.', origin: 'openai', itemId: 'rs_1' },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', callId: 'call_1', content: [{ type: 'text', text: 'sunny' }] }],
      },
    ]);
  });

  it('gives the same turns as sending the whole context in input', () => {
    const own = [
      { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{}' },
      { role: 'user', content: 'And Rome?' },
    ];
    const continued = parseResponsesRequest({ model: 'm', input: own });
    prependContext(continued, stored);
    const whole = parseResponsesRequest({ model: 'm', input: [...stored, ...own] });
    expect(continued.messages).toEqual(whole.messages);
  });

  it('joins tool results to the stored tool results before them, as one user turn', () => {
    const context: Item[] = [
      ...stored,
      { id: 'fco_1', type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ];
    const request = parseResponsesRequest({
      model: 'm',
      input: [{ type: 'function_call_output', call_id: 'call_9', output: 'cloudy' }],
    });
    prependContext(request, context);
    expect(request.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', callId: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
        { type: 'tool_result', callId: 'call_9', content: [{ type: 'text', text: 'cloudy' }] },
      ],
    });
  });

  it('refuses a stored context the parser cannot read as a 400 about previous_response_id', () => {
    const request: ChatRequest = { model: 'm', messages: [], stream: false, dropped: [] };
    expect(() => prependContext(request, [{ id: 'x', type: 'message', role: 'wizard', content: 'x' }])).toThrow(
      expect.objectContaining({ code: 'invalid_request', param: 'previous_response_id' }),
    );
  });
});

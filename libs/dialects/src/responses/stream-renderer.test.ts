import { assembleResponses, payload, received, responsesViolations, translate } from '../__fixtures__/streams/replay';
import type { ChatRequest, StreamEvent } from '../ir';
import { createResponsesStreamRenderer } from './stream-renderer';

const MODEL = 'house/gpt';
const FIXTURES = [
  'chat-text.sse',
  'chat-tools-parallel.sse',
  'chat-reasoning.sse',
  'chat-tools-then-stop.sse',
  'chat-fake-stream.sse',
  'chat-error-midstream.sse',
  'messages-text.sse',
  'messages-tools.sse',
  'messages-thinking.sse',
  'messages-error-midstream.sse',
];

const render = (name: string) => translate(name, createResponsesStreamRenderer({ model: MODEL }));
const renderEvents = (events: StreamEvent[]) => {
  const renderer = createResponsesStreamRenderer({ model: MODEL });
  return events.flatMap((e) => renderer.render(e));
};
const START: StreamEvent = { type: 'start', id: 'msg_up', model: 'up', created: 1700000000 };

describe('createResponsesStreamRenderer', () => {
  it.each(FIXTURES)('Responses stream has no [DONE] and sequence_number counts from 0 contiguously (%s)', (name) => {
    const frames = received(render(name));
    expect(frames.some((f) => f.data === '[DONE]')).toBe(false);
    expect(frames.map((f) => payload(f).sequence_number)).toEqual(frames.map((_, i) => i));
  });

  it.each(FIXTURES.filter((n) => !n.includes('error')))(
    'every .added has a .done and exactly one terminal event whose output equals the emitted items (%s)',
    (name) => {
      expect(responsesViolations(render(name))).toEqual([]);
    },
  );

  it('a text turn emits the documented events in order', () => {
    expect(received(render('chat-fake-stream.sse')).map((f) => f.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });

  it('response.created carries an in-progress resp_ object with empty output and null usage', () => {
    const created = payload(received(render('messages-text.sse'))[0]!);
    expect(created).toMatchObject({
      type: 'response.created',
      sequence_number: 0,
      response: {
        id: 'resp_msg_01XFDUDYJgAACzvnptvVoYEL',
        object: 'response',
        status: 'in_progress',
        output: [],
        usage: null,
        model: MODEL,
      },
    });
  });

  it(
    'stop reason follows tool calls actually emitted: stop ' +
      'after tool calls still completes with the function_call',
    () => {
      const reply = assembleResponses(render('chat-tools-then-stop.sse'));
      expect(reply.terminal).toBe('response.completed');
      expect(reply.items.map((i) => (i as { type: string }).type)).toEqual(['reasoning', 'function_call']);
      expect(reply.items[1]).toMatchObject({
        call_id: 'functions.get_weather:0',
        name: 'get_weather',
        arguments: '{"location":"Oslo"}',
      });
    },
  );

  it('function call events carry the item id, output index, and at the end the name and full arguments', () => {
    const events = received(render('chat-tools-parallel.sse')).map(payload);
    const added = events
      .filter((e) => e.type === 'response.output_item.added')
      .map((e) => e.item as Record<string, unknown>);
    expect(added[1]).toEqual({
      id: expect.stringMatching(/^fc_/),
      type: 'function_call',
      status: 'in_progress',
      arguments: '',
      call_id: 'call_8WmZsL0pQe4xTn7YbVd2HkJu',
      name: 'get_time',
    });
    const done = events.filter((e) => e.type === 'response.function_call_arguments.done');
    expect(done[1]).toEqual({
      type: 'response.function_call_arguments.done',
      sequence_number: expect.any(Number),
      item_id: added[1]!.id,
      output_index: 1,
      name: 'get_time',
      arguments: '{"tz": "Europe/Paris"}',
    });
  });

  it('max_tokens ends with response.incomplete, incomplete_details, and the cut item marked incomplete', () => {
    const frames = renderEvents([
      START,
      { type: 'text', text: 'cut' },
      { type: 'stop', reason: 'max_tokens' },
      { type: 'end' },
    ]);
    expect(responsesViolations(frames)).toEqual([]);
    const reply = assembleResponses(frames);
    expect(reply.terminal).toBe('response.incomplete');
    expect(reply.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'message', status: 'incomplete' }],
    });
  });

  it('a function call without argument text ends with arguments {}', () => {
    const frames = renderEvents([START, { type: 'tool_call', index: 0, id: 'toolu_1', name: 'now' }, { type: 'end' }]);
    expect(assembleResponses(frames).items).toEqual([
      expect.objectContaining({ type: 'function_call', call_id: 'toolu_1', arguments: '{}', status: 'completed' }),
    ]);
  });

  it.each(['chat-error-midstream.sse', 'messages-error-midstream.sse'])(
    'an upstream error mid-stream becomes response.failed and nothing follows (%s)',
    (name) => {
      const renderer = createResponsesStreamRenderer({ model: MODEL });
      const frames = received(translate(name, renderer));
      expect(responsesViolations(translate(name, createResponsesStreamRenderer({ model: MODEL })))).toEqual([]);
      const last = payload(frames[frames.length - 1]!);
      expect(last).toMatchObject({
        type: 'response.failed',
        response: { status: 'failed', error: { code: 'server_error', message: expect.any(String) }, output: [] },
      });
      expect(renderer.render({ type: 'end' })).toEqual([]);
    },
  );

  it('a rate limit in-stream fails with code rate_limit_exceeded', () => {
    const frames = received(renderEvents([START, { type: 'error', error: { status: 429, message: 'slow down' } }]));
    expect(payload(frames[frames.length - 1]!)).toMatchObject({
      response: { error: { code: 'rate_limit_exceeded', message: 'slow down' } },
    });
  });

  it('text then refusal share one message item as two parts', () => {
    const frames = renderEvents([
      START,
      { type: 'text', text: 'Well, ' },
      { type: 'refusal', text: 'no.' },
      { type: 'end' },
    ]);
    expect(responsesViolations(frames)).toEqual([]);
    expect(assembleResponses(frames).items).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Well, ', annotations: [], logprobs: [] },
          { type: 'refusal', refusal: 'no.' },
        ],
      },
    ]);
    expect(received(frames).map((f) => f.event)).toContain('response.refusal.done');
  });

  it('reasoning after a signature starts a new reasoning item; redacted thinking is an item of its own', () => {
    const frames = renderEvents([
      START,
      { type: 'reasoning', text: 'a' },
      { type: 'reasoning_signature', signature: 's1', origin: 'anthropic' },
      { type: 'reasoning_redacted', data: 'opaque' },
      { type: 'reasoning', text: 'b' },
      { type: 'end' },
    ]);
    expect(responsesViolations(frames)).toEqual([]);
    expect(assembleResponses(frames).items).toEqual([
      {
        id: expect.stringMatching(/^rs_/),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'a' }],
        encrypted_content: 'sbc.anthropic.thinking:s1',
      },
      {
        id: expect.stringMatching(/^rs_/),
        type: 'reasoning',
        summary: [],
        encrypted_content: 'sbc.anthropic.redacted:opaque',
      },
      { id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [{ type: 'summary_text', text: 'b' }] },
    ]);
  });

  it('an OpenAI-origin signature is carried as is', () => {
    const frames = renderEvents([
      START,
      { type: 'reasoning', text: 'a' },
      { type: 'reasoning_signature', signature: 'gAAAAB', origin: 'openai' },
      { type: 'end' },
    ]);
    expect(assembleResponses(frames).items[0]).toMatchObject({ encrypted_content: 'gAAAAB' });
  });

  it('echoes the caller request settings and instructions in the response objects', () => {
    const request: ChatRequest = {
      model: MODEL,
      messages: [],
      stream: true,
      temperature: 0.2,
      tools: [{ name: 'f', parameters: { type: 'object' } }],
      dropped: [],
    };
    const renderer = createResponsesStreamRenderer({ model: MODEL, request, instructions: 'Be brief.' });
    const frames = received(translate('chat-text.sse', renderer));
    const last = payload(frames[frames.length - 1]!);
    expect(last.response).toMatchObject({
      instructions: 'Be brief.',
      temperature: 0.2,
      tools: [{ type: 'function', name: 'f' }],
    });
    expect(renderer.summary()).toEqual({
      toolCalls: 0,
      stopReason: 'end_turn',
      usage: { inputTokens: 24, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it('a response the edge keeps carries the id the edge gave it in every response object, and store true', () => {
    const request: ChatRequest = {
      model: MODEL,
      messages: [],
      stream: true,
      responses: { store: true, id: 'resp_kept', previousResponseId: 'resp_before', instructions: 'Be brief.' },
      dropped: [],
    };
    const frames = received(translate('messages-text.sse', createResponsesStreamRenderer({ model: MODEL, request })));
    const objects = frames.map((frame) => payload(frame).response).filter(Boolean);
    expect(objects.length).toBeGreaterThanOrEqual(3);
    for (const object of objects)
      expect(object).toMatchObject({
        id: 'resp_kept',
        store: true,
        previous_response_id: 'resp_before',
        instructions: 'Be brief.',
      });
  });
});

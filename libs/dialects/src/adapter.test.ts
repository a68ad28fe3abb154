import { callerDialect, createTranslatedStream, upstreamAdapter, type CallerDialect } from './index';
import type { SseFrame, UpstreamFailure } from './ir';

const CHAT = callerDialect('chat');
const RESPONSES = callerDialect('responses');
const MESSAGES = callerDialect('messages');
const OPENAI = upstreamAdapter('openai');
const ANTHROPIC = upstreamAdapter('anthropic');

const framesOf = (frames: SseFrame[]) =>
  frames.map((frame) => ({ event: frame.event, data: frame.data === '[DONE]' ? frame.data : JSON.parse(frame.data) }));
const options = { model: 'caller-model', includeUsage: true, requestId: 'req_1' };

describe('caller dialects', () => {
  it('each dialect checks its own turns and required fields, every problem at once', () => {
    expect(CHAT.check({ model: 'm' })).toEqual([
      { path: 'messages', code: 'required', message: 'messages must be an array.' },
    ]);
    expect(CHAT.check({ model: 'm', messages: [] })).toEqual([]);
    expect(RESPONSES.check({ input: 42 }).map((issue) => issue.path)).toEqual(['input']);
    expect(RESPONSES.check({ input: 'hello' })).toEqual([]);
    expect(MESSAGES.check({}).map((issue) => issue.path)).toEqual(['messages', 'max_tokens']);
    expect(MESSAGES.check({ messages: [], max_tokens: 1 })).toEqual([]);
  });

  it('reads the output limit from the field its dialect uses, the newer chat field first', () => {
    expect(CHAT.requestedOutputLimit({ max_tokens: 10, max_completion_tokens: 20 })).toBe(20);
    expect(CHAT.requestedOutputLimit({ max_tokens: 10 })).toBe(10);
    expect(CHAT.requestedOutputLimit({ max_output_tokens: 10 })).toBeUndefined();
    expect(RESPONSES.requestedOutputLimit({ max_output_tokens: 30 })).toBe(30);
    expect(MESSAGES.requestedOutputLimit({ max_tokens: 40 })).toBe(40);
    expect(MESSAGES.requestedOutputLimit({ max_tokens: 2.5 })).toBeUndefined();
    expect(CHAT.outputLimitFields).toEqual(['max_tokens', 'max_completion_tokens']);
    expect([CHAT.nullOutputLimit, RESPONSES.nullOutputLimit, MESSAGES.nullOutputLimit]).toEqual([true, true, false]);
  });

  it('only a chat caller asks for the usage chunk', () => {
    expect(CHAT.includeUsage({ stream_options: { include_usage: true } })).toBe(true);
    expect(CHAT.includeUsage({ stream_options: null })).toBe(false);
    expect(MESSAGES.includeUsage({ stream_options: { include_usage: true } })).toBe(false);
  });

  it('answers errors, overloads and request ids the way its SDK reads them', () => {
    const failure: UpstreamFailure = { status: 503, message: 'busy', code: 'overloaded_error' };
    expect(MESSAGES.errorBody(failure, 'req_1')).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'busy' },
      request_id: 'req_1',
    });
    expect(CHAT.errorBody(failure, 'req_1')).toMatchObject({ error: { message: 'busy' }, request_id: 'req_1' });
    expect([CHAT.overloadStatus, RESPONSES.overloadStatus, MESSAGES.overloadStatus]).toEqual([503, 503, 529]);
    expect(MESSAGES.requestIdHeaders('req_1')).toEqual({ 'x-request-id': 'req_1', 'request-id': 'req_1' });
    expect(CHAT.requestIdHeaders('req_1')).toEqual({ 'x-request-id': 'req_1' });
  });

  it('only a Responses body asks for server-side state: store unless false, or a previous_response_id', () => {
    expect(RESPONSES.asksForState!({ input: 'x' })).toBe(true);
    expect(RESPONSES.asksForState!({ input: 'x', store: null })).toBe(true);
    expect(RESPONSES.asksForState!({ input: 'x', store: false })).toBe(false);
    expect(RESPONSES.asksForState!({ input: 'x', store: false, previous_response_id: 'resp_1' })).toBe(true);
    expect(RESPONSES.asksForState!({ input: 'x', store: false, previous_response_id: null })).toBe(false);
    expect(CHAT.asksForState).toBeUndefined();
    expect(MESSAGES.asksForState).toBeUndefined();
  });

  it('passes through to its twin upstream dialect only', () => {
    expect(CHAT.passthrough?.upstream).toBe('openai');
    expect(MESSAGES.passthrough?.upstream).toBe('anthropic');
    expect(RESPONSES.passthrough).toBeUndefined();
  });
});

describe('passthrough requests', () => {
  it('chat: the engine model, the admitted limit when the caller set none, and usage always asked of a stream', () => {
    const body = {
      model: 'caller-model',
      messages: [],
      stream: true,
      stream_options: { include_usage: false, extra: 1 },
    };
    expect(CHAT.passthrough!.request(body, { model: 'engine', outputLimit: 512, stream: true })).toEqual({
      model: 'engine',
      messages: [],
      stream: true,
      stream_options: { include_usage: true, extra: 1 },
      max_completion_tokens: 512,
    });
    // The caller's own limit stands, and the caller's body is not changed.
    const limited = { model: 'caller-model', messages: [], max_tokens: 64 };
    expect(CHAT.passthrough!.request(limited, { model: 'engine', outputLimit: 512, stream: false })).toEqual({
      ...limited,
      model: 'engine',
    });
    expect(limited.model).toBe('caller-model');
  });

  it('chat: a `__proto__` key in the JSON stays a key of the body sent, never the copy’s prototype', () => {
    const body = JSON.parse('{"model":"caller-model","messages":[],"__proto__":{"polluted":true}}');
    const sent = CHAT.passthrough!.request(body, { model: 'engine', outputLimit: 512, stream: false });
    expect(Object.getPrototypeOf(sent)).toBe(Object.prototype);
    expect((sent as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(sent))).toEqual(
      JSON.parse('{"model":"engine","messages":[],"__proto__":{"polluted":true},"max_completion_tokens":512}'),
    );
  });

  it('messages: only the engine model changes', () => {
    const body = { model: 'caller-model', max_tokens: 64, messages: [], stream: true };
    expect(MESSAGES.passthrough!.request(body, { model: 'engine', outputLimit: 10, stream: true })).toEqual({
      ...body,
      model: 'engine',
    });
  });
});

describe('passthrough replies', () => {
  it("chat: a minimal compatible server's reply gains the fields OpenAI's document requires of every choice", () => {
    const raw = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'engine',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hi' } }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    };
    const { body, usage } = CHAT.passthrough!.reply(raw, 'caller-model');
    expect(body).toMatchObject({
      model: 'caller-model',
      choices: [{ logprobs: null, message: { role: 'assistant', content: 'hi', refusal: null } }],
    });
    expect(usage).toMatchObject({ inputTokens: 3, outputTokens: 1 });
  });

  it('chat: fields the upstream did send are kept as sent', () => {
    const logprobs = { content: [] };
    const raw = {
      choices: [{ index: 0, logprobs, message: { role: 'assistant', content: null, refusal: 'no', tool_calls: [] } }],
    };
    const { body } = CHAT.passthrough!.reply(raw, 'caller-model');
    expect(body).toEqual({
      model: 'caller-model',
      choices: [{ index: 0, logprobs, message: { role: 'assistant', content: null, refusal: 'no', tool_calls: [] } }],
    });
  });

  it('the stop reason is read from the reply, in the neutral form', () => {
    const choice = (finish_reason: string) => ({ choices: [{ index: 0, finish_reason, message: { content: 'hi' } }] });
    expect(CHAT.passthrough!.reply(choice('length'), 'm').stopReason).toBe('max_tokens');
    expect(CHAT.passthrough!.reply(choice('tool_calls'), 'm').stopReason).toBe('tool_use');
    expect(CHAT.passthrough!.reply({ choices: [] }, 'm').stopReason).toBe('end_turn');
    expect(MESSAGES.passthrough!.reply({ content: [], stop_reason: 'max_tokens' }, 'm').stopReason).toBe('max_tokens');
    expect(MESSAGES.passthrough!.reply({ content: [], stop_reason: 'refusal' }, 'm').stopReason).toBe('refusal');
  });

  it('messages: the reply is the upstream’s with the caller’s model', () => {
    const raw = {
      id: 'msg_1',
      type: 'message',
      model: 'engine',
      content: [],
      usage: { input_tokens: 5, output_tokens: 2 },
    };
    const { body, usage } = MESSAGES.passthrough!.reply(raw, 'caller-model');
    expect(body).toEqual({ ...raw, model: 'caller-model' });
    expect(usage).toMatchObject({ inputTokens: 5, outputTokens: 2 });
  });
});

describe('streams the edge ends early', () => {
  it('chat passthrough: a cut stream ends with a length stop, the usage chunk when asked for, and [DONE]', () => {
    const stream = CHAT.passthrough!.stream(options);
    stream.push({
      data: JSON.stringify({
        id: 'chatcmpl-9',
        object: 'chat.completion.chunk',
        created: 7,
        model: 'engine',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
      }),
    });
    const frames = framesOf(stream.cut({ inputTokens: 4, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }));
    expect(frames).toEqual([
      {
        data: {
          id: 'chatcmpl-9',
          object: 'chat.completion.chunk',
          created: 7,
          model: 'caller-model',
          choices: [{ index: 0, delta: {}, finish_reason: 'length' }],
        },
      },
      {
        data: {
          id: 'chatcmpl-9',
          object: 'chat.completion.chunk',
          created: 7,
          model: 'caller-model',
          choices: [],
          usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
        },
      },
      { data: '[DONE]' },
    ]);
    const silent = CHAT.passthrough!.stream({ ...options, includeUsage: false });
    expect(
      framesOf(silent.cut({ inputTokens: 4, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 })).map(
        (frame) => frame.data === '[DONE]' || frame.data.choices[0].finish_reason,
      ),
    ).toEqual(['length', true]);
  });

  it('messages passthrough: a cut stream closes the open block before its max_tokens stop', () => {
    const stream = MESSAGES.passthrough!.stream(options);
    stream.push({
      event: 'message_start',
      data: JSON.stringify({
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'engine',
          content: [],
          usage: { input_tokens: 3, output_tokens: 1 },
        },
      }),
    });
    stream.push({
      event: 'content_block_start',
      data: JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    });
    const frames = framesOf(stream.cut({ inputTokens: 3, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0 }));
    expect(frames.map((frame) => frame.event)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(frames[1]!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: { output_tokens: 9 },
    });
  });

  it('passthrough failures are the dialect’s in-stream error event', () => {
    const failure: UpstreamFailure = { status: 502, message: 'broke' };
    expect(CHAT.passthrough!.stream(options).fail(failure)).toEqual([{ data: expect.stringContaining('"broke"') }]);
    expect(MESSAGES.passthrough!.stream(options).fail(failure)).toEqual([
      { event: 'error', data: expect.stringContaining('"broke"') },
    ]);
  });

  it.each<[string, CallerDialect]>([
    ['chat', CHAT],
    ['responses', RESPONSES],
    ['messages', MESSAGES],
  ])(
    'translated to %s: a cut stream stops at max_tokens through the renderer, and no frame follows its end',
    (_name, caller) => {
      const stream = createTranslatedStream(caller, ANTHROPIC, options);
      stream.push({
        event: 'message_start',
        data: JSON.stringify({
          type: 'message_start',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'engine',
            content: [],
            usage: { input_tokens: 3, output_tokens: 1 },
          },
        }),
      });
      stream.push({
        event: 'content_block_start',
        data: JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      });
      const cut = stream.cut({ inputTokens: 3, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0 });
      expect(cut.length).toBeGreaterThan(0);
      expect(cut.map((frame) => frame.data).join('\n')).toMatch(/max_tokens|length|incomplete/);
      expect(stream.fail({ status: 502, message: 'late' })).toEqual([]);
      expect(stream.textTemplate()).toBeUndefined();
    },
  );
});

describe('upstream adapters', () => {
  it('send credentials the way each vendor takes them', () => {
    expect(OPENAI.headers('sk-1', { 'anthropic-version': 'x' })).toEqual({ authorization: 'Bearer sk-1' });
    expect(OPENAI.headers(undefined, undefined)).toEqual({});
    expect(ANTHROPIC.headers('sk-2', undefined)).toEqual({ 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-2' });
    expect(ANTHROPIC.headers(undefined, { 'anthropic-version': '2024-01-01', 'anthropic-beta': 'tools' })).toEqual({
      'anthropic-version': '2024-01-01',
      'anthropic-beta': 'tools',
    });
  });

  it('name their call path, and only Anthropic has a count route', () => {
    expect([OPENAI.path, ANTHROPIC.path]).toEqual(['/chat/completions', '/messages']);
    expect([OPENAI.countTokensPath, ANTHROPIC.countTokensPath]).toEqual([undefined, '/messages/count_tokens']);
  });

  it('OpenAI: tool names cut to 64 characters come back as the caller declared them, in replies and streams', () => {
    const name = `lookup_${'x'.repeat(80)}`;
    const request = CHAT.parse({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name, parameters: { type: 'object' } } }],
    });
    const sent = OPENAI.renderRequest(request, 'engine', { defaultMaxTokens: 100 }) as {
      tools: Array<{ function: { name: string } }>;
    };
    const short = sent.tools[0]!.function.name;
    expect(short.length).toBeLessThanOrEqual(64);
    const reply = OPENAI.parseReply(
      {
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'engine',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: short, arguments: '{}' } }],
            },
          },
        ],
      },
      request,
    );
    expect(reply.content.find((block) => block.type === 'tool_call')).toMatchObject({ name });
    const events = OPENAI.streamParser(request).push({
      data: JSON.stringify({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'engine',
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: short, arguments: '' } }],
            },
            finish_reason: null,
          },
        ],
      }),
    });
    expect(events.find((event) => event.type === 'tool_call')).toMatchObject({ name });
  });
});

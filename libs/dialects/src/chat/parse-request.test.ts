import agent from '../__fixtures__/bodies/chat-request-agent.json';
import { DialectRequestError } from '../request-error';
import { parseChatRequest } from './parse-request';

function issuesOf(body: unknown) {
  try {
    parseChatRequest(body);
  } catch (error) {
    if (error instanceof DialectRequestError) return error;
  }
  throw new Error('expected a DialectRequestError');
}

describe('parseChatRequest', () => {
  it('keeps system and developer messages as system turns in place', () => {
    const req = parseChatRequest(agent);
    expect(req.messages.map((m) => m.role)).toEqual([
      'system',
      'system',
      'user',
      'assistant',
      'user',
      'system',
      'user',
    ]);
    expect(req.messages[1]).toEqual({ role: 'system', content: [{ type: 'text', text: 'Answer in French.' }] });
    expect(req.messages[5]).toEqual({ role: 'system', content: [{ type: 'text', text: 'Keep it under 20 words.' }] });
  });

  it('turns an image data URL into a base64 image with its media type and keeps the detail', () => {
    const req = parseChatRequest(agent);
    const user = req.messages[2]!;
    expect(user.content[1]).toEqual({
      type: 'image',
      source: {
        kind: 'base64',
        mediaType: 'image/png',
        data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      },
      detail: 'high',
    });
  });

  it('keeps an https image URL as a url image', () => {
    const req = parseChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }],
    });
    expect(req.messages[0]!.content).toEqual([{ type: 'image', source: { kind: 'url', url: 'https://x.test/a.png' } }]);
  });

  it('turns a PDF file part into a base64 document', () => {
    const req = parseChatRequest({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }],
        },
      ],
    });
    expect(req.messages[0]!.content).toEqual([
      {
        type: 'document',
        source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' },
        filename: 'a.pdf',
      },
    ]);
  });

  it('keeps assistant tool calls with their ids, names and argument text', () => {
    const req = parseChatRequest(agent);
    expect(req.messages[3]).toEqual({
      role: 'assistant',
      content: [
        { type: 'tool_call', id: 'functions.get_weather:0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', id: 'call_Bx72', name: 'get_time', arguments: '' },
      ],
    });
  });

  it('merges consecutive tool messages into one user turn of tool results', () => {
    const req = parseChatRequest(agent);
    expect(req.messages[4]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', callId: 'functions.get_weather:0', content: [{ type: 'text', text: '18°C, cloudy' }] },
        { type: 'tool_result', callId: 'call_Bx72', content: [{ type: 'text', text: '14:05' }] },
      ],
    });
  });

  it('reads assistant refusal, refusal parts and non-standard reasoning text', () => {
    const req = parseChatRequest({
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Well' },
            { type: 'refusal', refusal: 'No.' },
          ],
          reasoning_content: 'thinking…',
        },
        { role: 'user', content: 'again' },
        { role: 'assistant', content: null, refusal: 'Still no.', reasoning: 'vllm style' },
      ],
    });
    expect(req.messages[1]!.content).toEqual([
      { type: 'reasoning', text: 'thinking…', origin: 'openai' },
      { type: 'text', text: 'Well' },
      { type: 'refusal', text: 'No.' },
    ]);
    expect(req.messages[3]!.content).toEqual([
      { type: 'reasoning', text: 'vllm style', origin: 'openai' },
      { type: 'refusal', text: 'Still no.' },
    ]);
  });

  it('reads the request settings', () => {
    const req = parseChatRequest(agent);
    expect(req).toMatchObject({
      model: 'gpt-4.1',
      stream: true,
      includeStreamUsage: true,
      maxOutputTokens: 4096,
      temperature: 1.5,
      stop: ['\n\nUser:'],
      toolChoice: { type: 'auto' },
      parallelToolCalls: false,
      reasoning: { effort: 'high' },
      user: 'user-1234',
      metadata: { session: 'abc' },
    });
    expect(req.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: true,
      },
      { name: 'get_time' },
    ]);
  });

  it('takes max_tokens when max_completion_tokens is absent, and a single stop string', () => {
    const req = parseChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 100,
      stop: 'END',
    });
    expect(req.maxOutputTokens).toBe(100);
    expect(req.stop).toEqual(['END']);
  });

  it('prefers safety_identifier over user', () => {
    const req = parseChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      user: 'old',
      safety_identifier: 'new',
    });
    expect(req.user).toBe('new');
  });

  it.each([
    ['none', { type: 'none' }],
    ['required', { type: 'required' }],
    [
      { type: 'function', function: { name: 'f' } },
      { type: 'tool', name: 'f' },
    ],
    [
      {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'f' } }] },
      },
      { type: 'required' },
    ],
  ])('maps tool_choice %j', (choice, expected) => {
    const req = parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tool_choice: choice });
    expect(req.toolChoice).toEqual(expected);
  });

  it('reads every response_format form', () => {
    const base = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    expect(parseChatRequest({ ...base, response_format: { type: 'json_object' } }).responseFormat).toEqual({
      type: 'json_object',
    });
    expect(
      parseChatRequest({
        ...base,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
        },
      }).responseFormat,
    ).toEqual({ type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true });
  });

  it('reports fields it cannot carry as dropped', () => {
    const req = parseChatRequest(agent);
    expect(req.dropped).toEqual(expect.arrayContaining(['seed', 'logit_bias']));
    expect(req.dropped).not.toContain('metadata');
  });

  it('reports custom tools and an allowed_tools subset as dropped', () => {
    const req = parseChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'x', name: 'bob' }],
      tools: [{ type: 'custom', custom: { name: 'grammar' } }],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } },
      stream_options: { include_obfuscation: true },
      store: false,
    });
    expect(req.dropped).toEqual([
      'messages.*.name',
      'stream_options.include_obfuscation',
      'tools.*[type=custom]',
      'tool_choice.allowed_tools.tools',
    ]);
  });

  it('lists every problem with a dotted path, and names the first as param', () => {
    const error = issuesOf({
      messages: [
        { role: 'robot', content: 'x' },
        {
          role: 'user',
          content: [{ type: 'input_audio', input_audio: { data: 'AAA', format: 'wav' } }, { type: 'video' }],
        },
        { role: 'tool', content: 'no id' },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { arguments: '{}' } }] },
      ],
      n: 2,
      temperature: 3,
    });
    expect(error.issues).toEqual([
      { path: 'model', code: 'required', message: 'is required' },
      { path: 'messages.0.role', code: 'invalid_value', message: expect.any(String) },
      { path: 'messages.1.content.0.type', code: 'unsupported', message: expect.any(String) },
      { path: 'messages.1.content.1.type', code: 'invalid_value', message: expect.any(String) },
      { path: 'messages.2.tool_call_id', code: 'required', message: 'is required' },
      { path: 'messages.3.tool_calls.0.function.name', code: 'required', message: 'is required' },
      { path: 'n', code: 'unsupported', message: 'only n = 1 is supported' },
      { path: 'temperature', code: 'invalid_value', message: 'must be between 0 and 2' },
    ]);
    expect(error.param).toBe('model');
    expect(error.status).toBe(400);
    expect(error.message).toBe('model: is required (and 7 more problems)');
  });

  it('refuses a body that is not an object and an empty messages list', () => {
    expect(issuesOf('hello').issues[0]).toMatchObject({ path: 'body', code: 'invalid_type' });
    expect(issuesOf({ model: 'm', messages: [] }).issues).toEqual([
      { path: 'messages', code: 'too_small', message: 'must contain at least one item' },
    ]);
  });

  it('refuses a malformed data URL and a file id', () => {
    const error = issuesOf({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png,notbase64' } },
            { type: 'file', file: { file_id: 'file-abc' } },
          ],
        },
      ],
    });
    expect(error.issues.map((i) => [i.path, i.code])).toEqual([
      ['messages.0.content.0.image_url.url', 'invalid_value'],
      ['messages.0.content.1.file.file_id', 'unsupported'],
    ]);
  });

  it('does not copy large base64 strings', () => {
    const data = 'A'.repeat(5_000_000);
    const started = performance.now();
    const req = parseChatRequest({
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] },
      ],
    });
    expect(performance.now() - started).toBeLessThan(100);
    const block = req.messages[0]!.content[0]!;
    expect(block.type === 'image' && block.source.kind === 'base64' && block.source.data.length).toBe(5_000_000);
  });
});

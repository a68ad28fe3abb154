import agent from '../__fixtures__/bodies/responses-request-agent.json';
import { DialectRequestError } from '../request-error';
import { parseResponsesRequest } from './parse-request';

function errorOf(body: unknown): DialectRequestError {
  try {
    parseResponsesRequest(body);
  } catch (error) {
    if (error instanceof DialectRequestError) return error;
  }
  throw new Error('expected a DialectRequestError');
}

describe('parseResponsesRequest', () => {
  it('puts instructions first as a system turn and keeps developer input in place', () => {
    const req = parseResponsesRequest(agent);
    expect(req.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'system',
      'user',
    ]);
    expect(req.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'You are a coding agent.' }] });
    expect(req.messages[5]).toEqual({ role: 'system', content: [{ type: 'text', text: 'Prefer minimal diffs.' }] });
  });

  it('reads input_text, input_image data URLs and input_file PDFs', () => {
    const req = parseResponsesRequest(agent);
    expect(req.messages[1]!.content).toEqual([
      { type: 'text', text: 'Fix the failing test shown here.' },
      {
        type: 'image',
        source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAEBAQ==' },
        detail: 'auto',
      },
      {
        type: 'document',
        source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0xLjQK' },
        filename: 'spec.pdf',
      },
    ]);
  });

  it(
    'joins a reasoning item and the function call after it ' + 'into one assistant turn, reasoning marked as OpenAI’s',
    () => {
      const req = parseResponsesRequest(agent);
      expect(req.messages[2]).toEqual({
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'Need to read the test file first.',
            signature: 'gAAAAABoENCRYPTED',
            origin: 'openai',
            itemId: 'rs_68a1',
          },
          { type: 'tool_call', id: 'call_read_1', name: 'read_file', arguments: '{"path":"src/a.test.ts"}' },
        ],
      });
    },
  );

  it('pairs function_call_output by call_id as a tool result', () => {
    const req = parseResponsesRequest(agent);
    expect(req.messages[3]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', callId: 'call_read_1', content: [{ type: 'text', text: 'expect(add(1, 2)).toBe(4);' }] },
      ],
    });
  });

  it('reads a function_call_output given as content parts', () => {
    const req = parseResponsesRequest({
      model: 'm',
      input: [
        { type: 'function_call', call_id: 'c1', name: 'shot', arguments: '{}' },
        {
          type: 'function_call_output',
          call_id: 'c1',
          output: [
            { type: 'input_text', text: 'see' },
            { type: 'input_image', image_url: 'https://x.test/s.png' },
          ],
        },
      ],
    });
    expect(req.messages[1]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          callId: 'c1',
          content: [
            { type: 'text', text: 'see' },
            { type: 'image', source: { kind: 'url', url: 'https://x.test/s.png' } },
          ],
        },
      ],
    });
  });

  it('replays an assistant output_text message as assistant text', () => {
    const req = parseResponsesRequest(agent);
    expect(req.messages[4]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'The expectation is wrong.' }],
    });
  });

  it('reads flat function tools, the named tool choice, text.format and reasoning', () => {
    const req = parseResponsesRequest(agent);
    expect(req.tools).toEqual([
      {
        name: 'read_file',
        description: 'Read a file',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        strict: false,
      },
    ]);
    expect(req.toolChoice).toEqual({ type: 'tool', name: 'read_file' });
    expect(req.responseFormat).toEqual({
      type: 'json_schema',
      name: 'patch',
      schema: { type: 'object', properties: { diff: { type: 'string' } } },
      strict: true,
    });
    expect(req.reasoning).toEqual({ effort: 'medium', summary: 'auto' });
    expect(req.maxOutputTokens).toBe(8000);
    expect(req.stream).toBe(false);
  });

  it('takes a plain string input as one user turn', () => {
    const req = parseResponsesRequest({ model: 'm', input: 'Hello' });
    expect(req.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]);
  });

  it('reports built-in tools as dropped, but honours include of encrypted reasoning', () => {
    const req = parseResponsesRequest(agent);
    expect(req.dropped).toEqual(['tools.*[built-in]']);
    const withOtherInclude = parseResponsesRequest({ model: 'm', input: 'x', include: ['file_search_call.results'] });
    expect(withOtherInclude.dropped).toEqual(['include']);
  });

  it('reports built-in items in the input as dropped', () => {
    const req = parseResponsesRequest({
      model: 'm',
      input: [
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { role: 'user', content: 'x' },
      ],
    });
    expect(req.dropped).toEqual(['input.*[built-in]']);
  });

  it('refuses a tool_choice that forces a hosted tool no target can run (param tool_choice)', () => {
    for (const choice of [{ type: 'web_search' }, { type: 'file_search' }, { type: 'mcp', server_label: 's' }]) {
      const error = errorOf({ model: 'm', input: 'x', tools: [{ type: 'web_search' }], tool_choice: choice });
      expect(error.param).toBe('tool_choice');
      expect(error.issues[0]!.code).toBe('unsupported');
      expect(error.callerMessage).toContain(`\`${choice.type}\``);
    }
  });

  it('reads store (true unless said otherwise), previous_response_id and instructions as the state fields', () => {
    expect(parseResponsesRequest({ model: 'm', input: 'x' }).responses).toEqual({ store: true });
    expect(parseResponsesRequest({ model: 'm', input: 'x', store: null }).responses).toEqual({ store: true });
    const continued = parseResponsesRequest({
      model: 'm',
      input: 'x',
      store: false,
      previous_response_id: 'resp_abc-1_Z',
      instructions: 'Be brief.',
    });
    expect(continued.responses).toEqual({
      store: false,
      previousResponseId: 'resp_abc-1_Z',
      instructions: 'Be brief.',
    });
    expect(continued.dropped).toEqual([]);
  });

  it('refuses conversation and prompt (never kept), and a previous_response_id or store of the wrong shape', () => {
    const error = errorOf({
      model: 'm',
      input: 'x',
      previous_response_id: 'msg_1',
      conversation: 'conv_1',
      prompt: { id: 'pmpt_1' },
      store: 'yes',
    });
    expect(error.issues.map((i) => [i.path, i.code])).toEqual([
      ['conversation', 'unsupported'],
      ['prompt', 'unsupported'],
      ['previous_response_id', 'invalid_value'],
      ['store', 'invalid_type'],
    ]);
    expect(errorOf({ model: 'm', input: 'x', previous_response_id: 7 }).issues[0]).toMatchObject({
      path: 'previous_response_id',
      code: 'invalid_type',
    });
  });

  it('lists every problem in the input items with dotted paths', () => {
    const error = errorOf({
      input: [
        { role: 'wizard', content: 'x' },
        { type: 'function_call', name: 'f', arguments: '{}' },
        { type: 'item_reference', id: 'msg_1' },
        { role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] },
      ],
      text: { format: { type: 'json_schema', schema: {} } },
    });
    expect(error.issues.map((i) => [i.path, i.code])).toEqual([
      ['model', 'required'],
      ['input.0.role', 'invalid_value'],
      ['input.1.call_id', 'required'],
      ['input.2.type', 'unsupported'],
      ['input.3.content.0.file_id', 'unsupported'],
      ['text.format.name', 'required'],
    ]);
  });
});

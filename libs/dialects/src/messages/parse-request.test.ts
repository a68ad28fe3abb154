import agent from '../__fixtures__/bodies/messages-request-agent.json';
import { DialectRequestError } from '../request-error';
import { parseMessagesRequest } from './parse-request';

function errorOf(body: unknown): DialectRequestError {
  try {
    parseMessagesRequest(body);
  } catch (error) {
    if (error instanceof DialectRequestError) return error;
  }
  throw new Error('expected a DialectRequestError');
}

describe('parseMessagesRequest', () => {
  it('puts the system blocks first as one system turn', () => {
    const req = parseMessagesRequest(agent);
    expect(req.messages[0]).toEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'You are Claude Code.' },
        { type: 'text', text: 'Project root is /repo.' },
      ],
    });
    expect(parseMessagesRequest({ model: 'm', max_tokens: 1, system: 'Be brief.', messages: [] }).messages[0]).toEqual({
      role: 'system',
      content: [{ type: 'text', text: 'Be brief.' }],
    });
  });

  it('keeps thinking with its signature and redacted thinking as Anthropic-origin reasoning', () => {
    const req = parseMessagesRequest(agent);
    expect(req.messages[2]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: 'I should list files first.',
          signature: 'EqQBCkgIARABGAIiQL2sig==',
          origin: 'anthropic',
        },
        { type: 'reasoning', text: '', redacted: 'EmwKAhgBEgy3va3pzix/LafPsn4a', origin: 'anthropic' },
        { type: 'text', text: 'Listing files.' },
        { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'bash', arguments: '{"command":"ls"}' },
      ],
    });
  });

  it('reads tool results with block content, images and is_error', () => {
    const req = parseMessagesRequest(agent);
    expect(req.messages[3]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          callId: 'toolu_01A09q90qw90lq917835lq9',
          content: [
            { type: 'text', text: 'package.json\nsrc' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        { type: 'text', text: 'Also check the README.' },
      ],
    });
    expect(req.messages[5]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', callId: 'toolu_02B', content: [{ type: 'text', text: 'ENOENT' }], isError: true },
      ],
    });
  });

  it('reads the request settings', () => {
    const req = parseMessagesRequest(agent);
    expect(req).toMatchObject({
      model: 'claude-sonnet-4-5',
      maxOutputTokens: 16000,
      stream: true,
      stop: ['</answer>'],
      topK: 40,
      toolChoice: { type: 'auto' },
      parallelToolCalls: false,
      reasoning: { mode: 'enabled', budgetTokens: 10000 },
      user: 'claude-user-42',
    });
    expect(req.tools).toEqual([
      {
        name: 'bash',
        description: 'Run a command',
        parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
      },
      { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
    ]);
  });

  it('maps tool_choice any to required and tool to a named tool', () => {
    const base = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] };
    expect(parseMessagesRequest({ ...base, tool_choice: { type: 'any' } }).toolChoice).toEqual({ type: 'required' });
    expect(parseMessagesRequest({ ...base, tool_choice: { type: 'tool', name: 'f' } }).toolChoice).toEqual({
      type: 'tool',
      name: 'f',
    });
    expect(parseMessagesRequest({ ...base, tool_choice: { type: 'none' } }).toolChoice).toEqual({ type: 'none' });
  });

  it('reads adaptive thinking with output_config effort and a json_schema format', () => {
    const req = parseMessagesRequest({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
    });
    expect(req.reasoning).toEqual({ mode: 'adaptive', effort: 'high' });
    expect(req.responseFormat).toEqual({ type: 'json_schema', name: 'response', schema: { type: 'object' } });
  });

  it('turns text documents into text and keeps PDF documents with their title', () => {
    const req = parseMessagesRequest({
      model: 'm',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
            {
              type: 'document',
              title: 'spec',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
            },
          ],
        },
      ],
    });
    expect(req.messages[0]!.content).toEqual([
      { type: 'text', text: 'plain words' },
      {
        type: 'document',
        source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' },
        filename: 'spec',
      },
    ]);
  });

  it('reports cache_control and versioned server tools as dropped', () => {
    const req = parseMessagesRequest(agent);
    expect(req.dropped).toEqual(['cache_control', 'tools.*[server]']);
  });

  it('lists every problem with dotted paths, max_tokens included', () => {
    const error = errorOf({
      model: 'm',
      messages: [
        { role: 'tool', content: 'no tool role here' },
        { role: 'user', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: 'not an object' }] },
        { role: 'user', content: [{ type: 'image', source: { type: 'base64', data: 'AAA' } }] },
      ],
      tools: [{ name: 'f' }],
      thinking: { type: 'enabled', budget_tokens: 100 },
      temperature: 1.5,
    });
    expect(error.issues.map((i) => [i.path, i.code])).toEqual([
      ['max_tokens', 'required'],
      ['messages.0.role', 'invalid_value'],
      ['messages.1.content.0.type', 'invalid_value'],
      ['messages.2.content.0.input', 'invalid_type'],
      ['messages.3.content.0.source.media_type', 'required'],
      ['temperature', 'invalid_value'],
      ['tools.0.input_schema', 'required'],
      ['thinking.budget_tokens', 'invalid_value'],
    ]);
    expect(error.param).toBe('max_tokens');
  });

  it('words a refusal as Anthropic does: the field, then the problem', () => {
    const error = errorOf({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }, { role: 'tool' }] });
    expect(error.param).toBe('messages.1.role');
    expect(error.callerMessage).toBe(
      'messages.1.role: Unexpected role "tool". Allowed roles are "user", "assistant" or "system".',
    );
  });
});

describe('parseMessagesRequest on what Claude Code sends (dialects.md §9)', () => {
  it('keeps a mid-conversation system message in place as a system turn, string or text blocks', () => {
    const req = parseMessagesRequest({
      model: 'm',
      max_tokens: 32000,
      system: [{ type: 'text', text: 'Top.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'system', content: [{ type: 'text', text: 'Env.', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: 'again' },
        { role: 'system', content: 'Later.' },
      ],
    });
    expect(req.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Top.' }] },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      { role: 'system', content: [{ type: 'text', text: 'Env.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hi.' }] },
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
      { role: 'system', content: [{ type: 'text', text: 'Later.' }] },
    ]);
    expect(req.dropped).toEqual(['cache_control']);
  });

  it('refuses a system message that is not text, naming the block', () => {
    const error = errorOf({
      model: 'm',
      max_tokens: 1,
      messages: [{ role: 'user', content: 'x' }, { role: 'system', content: [{ type: 'image' }] }, { role: 'system' }],
    });
    expect(error.issues.map((i) => [i.path, i.code])).toEqual([
      ['messages.1.content.0.type', 'invalid_value'],
      ['messages.2.content', 'required'],
    ]);
  });

  it('accepts adaptive thinking, effort, context management, metadata and cache_control, naming what it drops', () => {
    const req = parseMessagesRequest({
      model: 'm',
      max_tokens: 32000,
      stream: true,
      cache_control: { type: 'ephemeral' },
      thinking: { type: 'adaptive', display: 'omitted' },
      output_config: { effort: 'high' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      metadata: { user_id: '{"device_id":"d","session_id":"s"}' },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] }],
      tools: [
        { name: 'Bash', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } },
        { name: 'Later', input_schema: { type: 'object' }, defer_loading: true },
      ],
    });
    expect(req.reasoning).toEqual({ effort: 'high', mode: 'adaptive' });
    expect(req.user).toBe('{"device_id":"d","session_id":"s"}');
    expect(req.tools?.map((tool) => tool.name)).toEqual(['Bash', 'Later']);
    expect([...req.dropped].sort()).toEqual(
      ['cache_control', 'context_management', 'thinking.display', 'tools.*.defer_loading'].sort(),
    );
  });
});

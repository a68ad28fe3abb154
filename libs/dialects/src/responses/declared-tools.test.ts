import { received, responsesViolations } from '../__fixtures__/streams/replay';
import { renderChatRequest } from '../chat/render-request';
import type { Block, ChatResponse, StreamEvent, ToolCallBlock, ToolResultBlock } from '../ir';
import { ZERO_USAGE } from '../usage';
import { parseResponsesRequest } from './parse-request';
import { renderResponsesResponse } from './render-response';
import { createResponsesStreamRenderer } from './stream-renderer';

/**
 * Responses tools that no target here takes as they are: `custom` (free-form) tools, offered as a function
 * with one string argument, and functions inside `namespace` tools; a forced choice of either names the
 * function the target knows, and history items of either kind are sent under the same names.
 */

type Json = Record<string, any>;
const GRAMMAR = { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/' };
const body = (extra: Json = {}) => ({
  model: 'm',
  input: 'patch it',
  tools: [
    { type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } },
    { type: 'custom', name: 'apply_patch', description: 'Edits files.', format: GRAMMAR },
    {
      type: 'namespace',
      name: 'crm',
      description: 'CRM tools.',
      tools: [
        { type: 'function', name: 'find', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
        { type: 'custom', name: 'note' },
      ],
    },
  ],
  ...extra,
});

describe('Responses custom and namespaced tools', () => {
  it('offers a custom tool as a function of one string argument, telling the model its grammar', () => {
    const request = parseResponsesRequest(body());
    expect(request.tools!.map((tool) => tool.name)).toEqual(['shell', 'apply_patch', 'crm__find', 'crm__note']);
    const patch = request.tools![1]!;
    expect(patch.parameters).toEqual({
      type: 'object',
      properties: { input: { type: 'string', description: expect.any(String) } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(patch.description).toContain('Edits files.');
    expect(patch.description).toContain(GRAMMAR.definition);
    expect(request.tools![3]!.declared).toEqual({
      name: 'note',
      kind: 'custom',
      namespace: 'crm',
      namespaceDescription: 'CRM tools.',
    });
    expect(request.dropped).toEqual([]);
  });

  it('forces the function the target knows for a forced custom tool or namespaced function', () => {
    const custom = parseResponsesRequest(body({ tool_choice: { type: 'custom', name: 'apply_patch' } }));
    expect(custom.toolChoice).toEqual({ type: 'tool', name: 'apply_patch' });
    const inNamespace = parseResponsesRequest(body({ tool_choice: { type: 'function', name: 'find' } }));
    expect(inNamespace.toolChoice).toEqual({ type: 'tool', name: 'crm__find' });
    expect(renderChatRequest(inNamespace, 'gpt').tool_choice).toEqual({
      type: 'function',
      function: { name: 'crm__find' },
    });
    const echoed = renderResponsesResponse(reply([]), custom);
    expect(echoed.tool_choice).toEqual({ type: 'custom', name: 'apply_patch' });
  });

  it('sends custom and namespaced calls of the history under the names their definitions have', () => {
    const request = parseResponsesRequest(
      body({
        input: [
          { role: 'user', content: 'go' },
          { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch\n' },
          { type: 'custom_tool_call_output', call_id: 'c1', output: 'Done!' },
          { type: 'custom_tool_call', call_id: 'c2', name: 'note', namespace: 'crm', input: 'hello' },
          { type: 'custom_tool_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'noted' }] },
          { type: 'function_call', call_id: 'c3', name: 'find', namespace: 'crm', arguments: '{"q":"x"}' },
          { type: 'function_call_output', call_id: 'c3', output: 'none' },
          // A namespace no tool of this request declares still gets a stable flat name.
          { type: 'function_call', call_id: 'c4', name: 'gone', namespace: 'old', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c4', output: 'x' },
        ],
      }),
    );
    const blocks: Block[] = request.messages.flatMap((message): Block[] => message.content);
    const calls = blocks.filter((block): block is ToolCallBlock => block.type === 'tool_call');
    expect(calls.map((call) => [call.name, call.arguments])).toEqual([
      ['apply_patch', '{"input":"*** Begin Patch\\n"}'],
      ['crm__note', '{"input":"hello"}'],
      ['crm__find', '{"q":"x"}'],
      ['old__gone', '{}'],
    ]);
    const results = blocks.filter((block): block is ToolResultBlock => block.type === 'tool_result');
    expect(results.map((result) => result.callId)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(request.dropped).toEqual([]);
  });

  const reply = (content: ChatResponse['content']): ChatResponse => ({
    id: 'up',
    model: 'm',
    created: 1,
    content,
    stopReason: content.length > 0 ? 'tool_use' : 'end_turn',
    usage: ZERO_USAGE,
  });

  it('renders a call to a custom tool back as a custom_tool_call with its input, in its namespace if any', () => {
    const request = parseResponsesRequest(body());
    const out = renderResponsesResponse(
      reply([
        { type: 'tool_call', id: 'call_1', name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' },
        { type: 'tool_call', id: 'call_2', name: 'crm__note', arguments: '{"input":"hi"}' },
        { type: 'tool_call', id: 'call_3', name: 'shell', arguments: '' },
      ]),
      request,
    );
    expect(out.output).toEqual([
      {
        id: expect.stringMatching(/^ctc_/),
        type: 'custom_tool_call',
        call_id: 'call_1',
        name: 'apply_patch',
        input: '*** Begin Patch',
      },
      {
        id: expect.stringMatching(/^ctc_/),
        type: 'custom_tool_call',
        call_id: 'call_2',
        name: 'note',
        input: 'hi',
        namespace: 'crm',
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        arguments: '{}',
        call_id: 'call_3',
        name: 'shell',
      },
    ]);
    expect(out.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'shell' }),
      { type: 'custom', name: 'apply_patch', format: GRAMMAR },
      {
        type: 'namespace',
        name: 'crm',
        description: 'CRM tools.',
        tools: [
          expect.objectContaining({ type: 'function', name: 'find' }),
          { type: 'custom', name: 'note', format: { type: 'text' } },
        ],
      },
    ]);
  });

  it('streams a custom call as output_item.added, custom_tool_call_input delta and done, output_item.done', () => {
    const renderer = createResponsesStreamRenderer({ model: 'm', request: parseResponsesRequest(body()) });
    const events: StreamEvent[] = [
      { type: 'start', id: 'up', model: 'x', created: 1 },
      { type: 'tool_call', index: 0, id: 'call_1', name: 'apply_patch' },
      { type: 'tool_arguments', index: 0, delta: '{"input":"*** Begin' },
      { type: 'tool_arguments', index: 0, delta: ' Patch\\nend"}' },
      { type: 'stop', reason: 'tool_use' },
      { type: 'end' },
    ];
    const frames = events.flatMap((event) => renderer.render(event));
    expect(responsesViolations(frames)).toEqual([]);
    const data = received(frames).map((frame) => JSON.parse(frame.data) as Json);
    expect(data.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(data[2]!.item).toEqual({
      id: expect.stringMatching(/^ctc_/),
      type: 'custom_tool_call',
      call_id: 'call_1',
      name: 'apply_patch',
      input: '',
    });
    expect(data[3]).toMatchObject({ delta: '*** Begin Patch\nend', output_index: 0, item_id: data[2]!.item.id });
    expect(data[4]).toMatchObject({ input: '*** Begin Patch\nend' });
    expect(data[6]!.response.output).toEqual([{ ...data[2]!.item, input: '*** Begin Patch\nend' }]);
  });
});

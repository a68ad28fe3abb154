import chatReply from '../__fixtures__/bodies/chat-response-tool-calls.json';
import messagesReply from '../__fixtures__/bodies/messages-response-thinking.json';
import { parseChatResponse } from '../chat/parse-response';
import type { ChatResponse } from '../ir';
import { parseMessagesResponse } from '../messages/parse-response';
import { ZERO_USAGE } from '../usage';
import { parseResponsesRequest } from './parse-request';
import { renderResponsesResponse } from './render-response';

const reply = (over: Partial<ChatResponse>): ChatResponse => ({
  id: 'x',
  model: 'm',
  created: 1,
  content: [],
  stopReason: 'end_turn',
  usage: ZERO_USAGE,
  ...over,
});
type Item = Record<string, unknown>;

describe('renderResponsesResponse', () => {
  it('renders an Anthropic reply as reasoning, message and function_call items with Responses usage', () => {
    const body = renderResponsesResponse(parseMessagesResponse(messagesReply));
    const output = body.output as Item[];
    expect(body).toMatchObject({
      id: 'resp_msg_013Zva2CMHLNnXjNJJKqJ2EF',
      object: 'response',
      status: 'completed',
      incomplete_details: null,
      model: 'claude-sonnet-4-5-20250929',
    });
    expect(output.map((item) => item.type)).toEqual(['reasoning', 'reasoning', 'message', 'function_call']);
    expect(output[0]).toEqual({
      type: 'reasoning',
      id: expect.stringMatching(/^rs_/),
      summary: [{ type: 'summary_text', text: 'The user wants the weather; call the tool.' }],
      encrypted_content: 'sbc.anthropic.thinking:EuYBCkQYAiJAbQ8sig+/==',
    });
    expect(output[2]).toEqual({
      type: 'message',
      id: expect.stringMatching(/^msg_/),
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Checking the weather.', annotations: [], logprobs: [] }],
    });
    expect(output[3]).toEqual({
      type: 'function_call',
      id: expect.stringMatching(/^fc_/),
      call_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
    expect(body.usage).toEqual({
      input_tokens: 1230,
      input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
      output_tokens: 120,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1350,
    });
  });

  it('gives every function call its own fc_ item id and keeps the upstream call id as call_id', () => {
    const output = renderResponsesResponse(parseChatResponse(chatReply)).output as Item[];
    const calls = output.filter((item) => item.type === 'function_call');
    expect(calls.map((c) => c.call_id)).toEqual(['call_a1', 'call_b2']);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it('groups consecutive text and refusal parts into one message item', () => {
    const output = renderResponsesResponse(
      reply({
        content: [
          { type: 'text', text: 'a' },
          { type: 'refusal', text: 'no' },
        ],
      }),
    ).output as Item[];
    expect(output).toHaveLength(1);
    expect(output[0]!.content).toEqual([
      { type: 'output_text', text: 'a', annotations: [], logprobs: [] },
      { type: 'refusal', refusal: 'no' },
    ]);
  });

  it('reports a reply cut by max tokens as incomplete, on the response and its last item', () => {
    const body = renderResponsesResponse(
      reply({ content: [{ type: 'text', text: 'trunc' }], stopReason: 'max_tokens' }),
    );
    expect(body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect((body.output as Item[])[0]!.status).toBe('incomplete');
  });

  it('echoes the caller’s request settings', () => {
    const request = parseResponsesRequest({
      model: 'gpt-5',
      input: 'x',
      temperature: 0.2,
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
      tool_choice: 'required',
    });
    const body = renderResponsesResponse(reply({}), request);
    expect(body).toMatchObject({
      temperature: 0.2,
      tool_choice: 'required',
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
    });
  });

  it('is stateless by default: the upstream id, store false, no previous response, instructions echoed', () => {
    const request = parseResponsesRequest({ model: 'm', input: 'x', instructions: 'Be brief.' });
    const body = renderResponsesResponse(reply({ id: 'chatcmpl-1' }), request);
    expect(body).toMatchObject({
      id: 'resp_chatcmpl-1',
      store: false,
      previous_response_id: null,
      instructions: 'Be brief.',
    });
  });

  it('a response the edge keeps has the id the edge gave it, store true and the response it continues', () => {
    const request = parseResponsesRequest({ model: 'm', input: 'x', previous_response_id: 'resp_before' });
    request.responses!.id = 'resp_kept';
    const body = renderResponsesResponse(reply({ id: 'resp_from_upstream' }), request);
    expect(body).toMatchObject({ id: 'resp_kept', store: true, previous_response_id: 'resp_before' });
  });
});

import type { ChatRequest } from '@sbc/dialects';
import { inputMessages, MAX_PART_CHARS, outputMessages } from './genai-content';

const request = (messages: ChatRequest['messages']): ChatRequest => ({
  model: 'm',
  messages,
  stream: false,
  dropped: [],
});

describe('inputMessages', () => {
  it('records every turn in order as role and parts, in the conventions’ shape', () => {
    const messages = inputMessages(
      request([
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', callId: 'call_1', content: [{ type: 'text', text: 'rainy' }] }],
        },
      ]),
    );
    expect(JSON.parse(messages)).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Weather?' }, { type: 'image' }] },
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'user', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'rainy' }] },
    ]);
    // An image's bytes are never copied into a trace.
    expect(messages).not.toContain('iVBORw0KGgo');
  });

  it('redacts secrets in text, tool arguments and tool results', () => {
    const messages = inputMessages(
      request([
        { role: 'user', content: [{ type: 'text', text: 'my key is sk-abcdefghijklmnop' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_call', id: 'c', name: 'login', arguments: '{"token":"sbc_abcdefghijkl"}' }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', callId: 'c', content: [{ type: 'text', text: 'Bearer abcdefghijkl' }] }],
        },
      ]),
    );
    expect(messages).not.toMatch(/sk-abc|sbc_abc|abcdefghijkl/);
    expect(messages.match(/\[redacted\]/g)).toHaveLength(3);
  });

  it('cuts a part past MAX_PART_CHARS and says so', () => {
    const long = 'a'.repeat(MAX_PART_CHARS + 10);
    const [message] = JSON.parse(inputMessages(request([{ role: 'user', content: [{ type: 'text', text: long }] }])));
    expect(message.parts[0].content).toBe(`${'a'.repeat(MAX_PART_CHARS)}…[truncated]`);
  });
});

describe('outputMessages', () => {
  it('records the reply as one assistant message with its finish reason', () => {
    const output = outputMessages([{ type: 'text', text: 'Hi, sk-abcdefghijklmnop' }], 'stop');
    expect(JSON.parse(output)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hi, [redacted]' }], finish_reason: 'stop' },
    ]);
  });
});

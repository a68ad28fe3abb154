import { callerDialect } from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import { countRequestTokens } from './count-tokens';
import { bodyOf, engineCall, forgetBody, promptOf, type CallerCall } from './plan';

const CHAT = callerDialect('chat');
const MESSAGES = callerDialect('messages');

const openai: Engine = {
  dialect: 'openai',
  baseUrl: 'http://upstream.test',
  model: 'engine-model',
  headers: {},
  label: 'test',
};
const anthropic: Engine = { ...openai, dialect: 'anthropic' };

const conversation = [
  { role: 'system', content: 'You answer briefly.' },
  { role: 'user', content: 'What is "JSON"? \\ \u00e9 \ud83d\ude00' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"JSON"}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'JavaScript Object Notation' },
  { role: 'user', content: [{ type: 'text', text: 'And YAML?' }] },
];
const tools = [
  {
    type: 'function',
    function: {
      name: 'lookup',
      description: 'Looks a term up.',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
    },
  },
];

function chatCall(body: Record<string, unknown>): CallerCall {
  return {
    adapter: CHAT,
    body,
    callerModel: body.model as string,
    fallbacks: [],
    stream: true,
    includeUsage: false,
    outputLimit: 512,
  };
}

describe('a call whose reply was chosen', () => {
  it('passthrough: the body as sent parses to the prompt the caller sent, and the parsed body is gone', () => {
    const body = { model: 'caller-model', stream: true, messages: conversation, tools };
    const call = chatCall(body);
    const plan = engineCall(call, openai, { defaultMaxTokens: 4_096 });
    // What the engine is sent differs from the caller's body (model, limit, usage asked for) ...
    expect(JSON.parse(plan.body.toString('utf8'))).toMatchObject({
      model: 'engine-model',
      max_completion_tokens: 512,
      stream_options: { include_usage: true },
    });

    forgetBody(call, plan.body);
    expect(call.body).toBeUndefined();
    expect(call.sent).toBe(plan.body);
    expect(() => bodyOf(call)).toThrow('let go');
    // ... but not in its prompt: the same turns and tools, the same count.
    const before = CHAT.parse(body);
    const after = promptOf(call);
    expect(after.messages).toEqual(before.messages);
    expect(after.tools).toEqual(before.tools);
    expect(countRequestTokens(after)).toBe(countRequestTokens(before));
  });

  it('translated: the parsed neutral form is kept and the body as sent (another dialect) is not', () => {
    const call = chatCall({ model: 'caller-model', messages: conversation, tools });
    call.request = CHAT.parse(bodyOf(call));
    const plan = engineCall(call, anthropic, { defaultMaxTokens: 4_096 });
    forgetBody(call, plan.body);
    expect(call.body).toBeUndefined();
    expect(call.sent).toBeUndefined();
    expect(promptOf(call)).toBe(call.request);
  });

  it('before it was chosen, the prompt is read from the caller body', () => {
    const body = { model: 'caller-model', max_tokens: 64, messages: [{ role: 'user', content: 'Hello there' }] };
    const call: CallerCall = {
      adapter: MESSAGES,
      body,
      callerModel: 'caller-model',
      fallbacks: [],
      stream: false,
      includeUsage: false,
    };
    expect(promptOf(call)).toEqual(MESSAGES.parse(body));
  });
});

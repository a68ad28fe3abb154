import {
  parseChatRequest,
  parseMessagesRequest,
  parseResponsesRequest,
  renderChatRequest,
  renderMessagesRequest,
  type ChatRequest,
} from '@sbc/dialects';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SimError } from './errors';
import { checkAnthropicRules, checkOpenAiRules } from './strict-rules';

/**
 * The gateway's translations pass the providers' rules: every caller dialect's agent conversation (system
 * text mid-conversation, parallel tool calls, ids Anthropic would refuse, results in any order), rendered for
 * either upstream, is a request the real provider would take.
 */

const refusal = (check: () => void): string | undefined => {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof SimError) return error.message;
    throw error;
  }
};

const asAnthropic = (request: ChatRequest) => renderMessagesRequest(request, 'claude-x', { defaultMaxTokens: 1024 });
const asOpenAi = (request: ChatRequest) => renderChatRequest(request, 'gpt-x');

/** The dialects library's golden agent requests, one per caller dialect. */
const agent = (dialect: string): unknown =>
  JSON.parse(
    readFileSync(
      path.join(__dirname, '../../../../libs/dialects/src/__fixtures__/bodies', `${dialect}-request-agent.json`),
      'utf8',
    ),
  );

const callers: Array<[string, ChatRequest]> = [
  ['chat', parseChatRequest(agent('chat'))],
  ['responses', parseResponsesRequest(agent('responses'))],
  ['messages', parseMessagesRequest(agent('messages'))],
  [
    'chat with results answered out of order and an empty assistant text beside its calls',
    parseChatRequest({
      model: 'm',
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'w', arguments: '{}' } },
            { id: 'call_b', type: 'function', function: { name: 'w', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_b', content: '' },
        { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
        { role: 'system', content: 'be brief' },
      ],
      tools: [{ type: 'function', function: { name: 'w' } }],
    }),
  ],
];

/** Bodies recorded from the real CLIs (dialects.md §9), prose replaced by placeholders. */
const recorded = (name: string): { body: Record<string, unknown> } =>
  JSON.parse(
    readFileSync(
      path.join(__dirname, '../../../../libs/dialects/src/__fixtures__/bodies/agents', `${name}.json`),
      'utf8',
    ),
  ) as { body: Record<string, unknown> };

callers.push(
  ['Claude Code first-turn', parseMessagesRequest(recorded('claude-code-first-turn').body)],
  ['Claude Code tool-result', parseMessagesRequest(recorded('claude-code-tool-result').body)],
  ['Codex first-turn', parseResponsesRequest(recorded('codex-first-turn').body)],
  ['Codex namespaced-call result', parseResponsesRequest(recorded('codex-namespace-result').body)],
);

describe('a Claude Code body passed through as sent', () => {
  it.each(['claude-code-first-turn', 'claude-code-tool-result'])('breaks none of Anthropic’s rules (%s)', (name) => {
    const { body } = recorded(name);
    expect(refusal(() => checkAnthropicRules(body, 'messages'))).toBeUndefined();
    const { max_tokens: _limit, stream: _stream, metadata: _metadata, ...count } = body;
    expect(refusal(() => checkAnthropicRules(count, 'count_tokens'))).toBeUndefined();
  });
});

describe.each(callers)('a %s conversation', (_caller, request) => {
  it('rendered for an Anthropic upstream breaks none of Anthropic’s rules', () => {
    expect(refusal(() => checkAnthropicRules(asAnthropic(request), 'messages'))).toBeUndefined();
  });

  it('rendered for an OpenAI upstream breaks none of OpenAI’s rules', () => {
    expect(refusal(() => checkOpenAiRules(asOpenAi(request)))).toBeUndefined();
  });
});

describe('the rules themselves', () => {
  const use = (id: string) => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'w', input: {} }] });
  const result = (id: string) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] });

  it('pair a tool_result only with a tool_use of the message right before it', () => {
    const ask = { role: 'user', content: 'hi' };
    expect(
      refusal(() => checkAnthropicRules({ messages: [ask, use('t1'), result('t1')] }, 'messages')),
    ).toBeUndefined();
    expect(
      refusal(() =>
        checkAnthropicRules(
          { messages: [ask, use('t1'), result('t1'), { role: 'assistant', content: 'ok' }, result('t1')] },
          'messages',
        ),
      ),
    ).toContain('unexpected `tool_use_id`');
    expect(refusal(() => checkAnthropicRules({ messages: [ask, result('t1')] }, 'messages'))).toContain(
      'unexpected `tool_use_id`',
    );
  });

  it(
    'let a conversation end on an assistant tool_use (a ' + 'prefill) and a chat on assistant tool_calls is refused',
    () => {
      expect(
        refusal(() => checkAnthropicRules({ messages: [{ role: 'user', content: 'hi' }, use('t1')] }, 'messages')),
      ).toBeUndefined();
      const calls = {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }],
      };
      expect(refusal(() => checkOpenAiRules({ messages: [{ role: 'user', content: 'hi' }, calls] }))).toContain(
        'did not have response messages: c1',
      );
    },
  );
});

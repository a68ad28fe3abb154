import type { ChatResponse } from '@sbc/dialects';
import { createLogger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import type { OwnCall } from '../model-calls/own-call';
import type { EdgeGuardrail } from './edge-guardrails';
import { createGuardrailJudge } from './guardrail-judge';

const guardrail: EdgeGuardrail = {
  id: 'grd_judge',
  name: 'launch judge',
  kind: 'judge',
  request: true,
  reply: true,
  judge: { model: 'house', question: 'Is it about the launch?', max_tokens: 64, timeout_ms: 5_000, fail: 'closed' },
};
const caller = { principal: { userId: 'usr_1' } as Principal, requestId: 'req_1' };

/** The judge's model, answering `answer` with its verdict tool; it keeps the user message of each question. */
function judgeModel(answer: 'yes' | 'no') {
  const asked: string[] = [];
  const call = async (own: OwnCall): Promise<ChatResponse> => {
    const messages = own.body.messages as Array<{ role: string; content: string }>;
    asked.push(messages.find((message) => message.role === 'user')!.content);
    return {
      id: 'chatcmpl-1',
      model: 'house',
      created: 0,
      content: [{ type: 'tool_call', id: 'call_1', name: 'verdict', arguments: JSON.stringify({ answer }) }],
      stopReason: 'tool_use',
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    };
  };
  return { asked, call };
}

const logger = createLogger({ service: 'test', level: 'silent' });

describe('a judge guardrail’s question', () => {
  it('holds every text of the call, up to GUARDRAIL_JUDGE_MAX_CHARS', async () => {
    const model = judgeModel('yes');
    const judge = createGuardrailJudge({ call: model.call, logger, maxChars: 4_000 });
    const request = ['a'.repeat(1_500), 'when is the launch?'];
    const reply = ['b'.repeat(1_500)];
    expect(await judge.ask(guardrail, { request, reply }, caller)).toBe('block');
    expect(model.asked).toHaveLength(1);
    for (const text of [...request, ...reply]) expect(model.asked[0]).toContain(text);
  });

  it('is not asked of a call whose texts would make it longer: oversize, for its `fail` to decide', async () => {
    const model = judgeModel('no');
    const judge = createGuardrailJudge({ call: model.call, logger, maxChars: 4_000 });
    const texts = { request: ['a'.repeat(2_000)], reply: ['b'.repeat(2_000)] };
    expect(await judge.ask(guardrail, texts, caller)).toBe('oversize');
    expect(model.asked).toEqual([]);
  });
});

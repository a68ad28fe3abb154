import { parseChatRequest } from './chat/parse-request';
import { DROPPED_FIELDS, droppedForUpstream } from './dropped-fields';
import { parseMessagesRequest } from './messages/parse-request';
import { parseResponsesRequest } from './responses/parse-request';

describe('DROPPED_FIELDS', () => {
  it('gives every entry a reason', () => {
    for (const fields of Object.values(DROPPED_FIELDS)) {
      for (const spec of Object.values(fields)) expect(spec.reason.length).toBeGreaterThan(10);
    }
  });

  it('reports each top-level field a chat caller set, but not its defaults', () => {
    const req = parseChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      logprobs: true,
      top_logprobs: 2,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      prediction: { type: 'content', content: 'x' },
      store: false,
      service_tier: null,
    });
    expect(req.dropped).toEqual(['logprobs', 'top_logprobs', 'presence_penalty', 'frequency_penalty', 'prediction']);
  });

  it('reports Anthropic-only settings once the route to an OpenAI upstream is known', () => {
    const req = parseMessagesRequest({
      model: 'm',
      max_tokens: 5000,
      messages: [{ role: 'user', content: 'x' }],
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      container: 'c1',
    });
    expect(req.dropped).toEqual(['container']);
    expect(droppedForUpstream('messages', req, 'openai')).toEqual(['top_k', 'thinking.budget_tokens']);
    expect(droppedForUpstream('messages', req, 'anthropic')).toEqual([]);
  });

  it('reports JSON mode and metadata as dropped for an Anthropic upstream', () => {
    const req = parseResponsesRequest({
      model: 'm',
      input: 'x',
      text: { format: { type: 'json_object' } },
      metadata: { a: 'b' },
    });
    expect(droppedForUpstream('responses', req, 'anthropic')).toEqual(['metadata', 'text.format[json_object]']);
    expect(droppedForUpstream('responses', req, 'openai')).toEqual(['metadata']);
  });
});

import { messagesUsage, usageFromMessages } from './usage';

describe('messagesUsage', () => {
  it('says how much of the output was reasoning when the upstream said so, and reads back the same', () => {
    const usage = {
      inputTokens: 460,
      outputTokens: 34,
      cacheReadTokens: 300,
      cacheWriteTokens: 120,
      reasoningTokens: 25,
    };
    const rendered = messagesUsage(usage);
    expect(rendered).toEqual({
      input_tokens: 40,
      cache_creation_input_tokens: 120,
      cache_read_input_tokens: 300,
      output_tokens: 34,
      output_tokens_details: { thinking_tokens: 25 },
    });
    expect(usageFromMessages(rendered)).toEqual(usage);
  });

  it('has no details object when the reasoning is unknown or none', () => {
    const usage = { inputTokens: 10, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 };
    expect(messagesUsage(usage)).not.toHaveProperty('output_tokens_details');
    expect(messagesUsage({ ...usage, reasoningTokens: 0 })).not.toHaveProperty('output_tokens_details');
  });
});

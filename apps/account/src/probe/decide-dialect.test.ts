import { decideByCalls, decideByShape, listShape } from './decide-dialect';

const anthropicItem = { type: 'model', id: 'claude-x', display_name: 'Claude X', created_at: '2025-02-19T00:00:00Z' };
const openAiItem = { id: 'gpt-x', object: 'model', created: 1686935002, owned_by: 'openai' };

describe("a model list's shape", () => {
  it("names Anthropic's items and OpenAI's items by the fields each always sends", () => {
    expect(listShape([anthropicItem])).toBe('anthropic');
    expect(listShape([openAiItem, { ...openAiItem, id: 'b' }])).toBe('openai');
  });

  it('names neither for bare ids, an empty list, or a mixture', () => {
    expect(listShape([{ id: 'a' }])).toBe('unknown');
    expect(listShape([])).toBe('unknown');
    expect(listShape([anthropicItem, openAiItem])).toBe('unknown');
  });
});

describe('deciding an auto endpoint', () => {
  it('takes the only dialect that answered', () => {
    expect(decideByShape({ openai: { ok: false }, anthropic: { ok: true, shape: 'unknown' } }, 'openai')).toMatchObject(
      { dialect: 'anthropic', reason: expect.stringContaining('only the Anthropic probe') },
    );
  });

  it(
    "when both answer with Anthropic's shape (a server that ignores which key header came), takes Anthropic whatever " +
      'the host',
    () => {
      const decision = decideByShape(
        { openai: { ok: true, shape: 'anthropic' }, anthropic: { ok: true, shape: 'anthropic' } },
        'openai',
      );
      expect(decision).toEqual({
        dialect: 'anthropic',
        reason: expect.stringContaining('has Anthropic\'s shape (type "model", display_name, created_at)'),
      });
    },
  );

  it("when each probe got its own dialect's shape the endpoint speaks both, and the host preference decides", () => {
    expect(
      decideByShape({ openai: { ok: true, shape: 'openai' }, anthropic: { ok: true, shape: 'anthropic' } }, 'openai'),
    ).toMatchObject({ dialect: 'openai', reason: expect.stringContaining('speaks both') });
  });

  it('asks for one-token calls when the shape names neither, and takes the one that answered', () => {
    const decision = decideByShape(
      { openai: { ok: true, shape: 'unknown' }, anthropic: { ok: true, shape: 'unknown' } },
      'openai',
    );
    expect(decision).toMatchObject({ ask: true });
    const before = (decision as { reason: string }).reason;
    expect(decideByCalls({ openai: false, anthropic: true }, 'openai', before)).toEqual({
      dialect: 'anthropic',
      reason: `${before}; a one-token call was answered on /v1/messages only`,
    });
    expect(decideByCalls({ openai: true, anthropic: true }, 'anthropic', before)).toMatchObject({
      dialect: 'anthropic',
      reason: expect.stringContaining('both one-token calls were answered'),
    });
  });
});

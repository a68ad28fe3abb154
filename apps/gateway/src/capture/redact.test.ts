import { redactSecrets } from '@sbc/guardrails';
import { CappedText, redactHeaders, shownUrl, WITHHELD } from './redact';

describe('what a capture keeps', () => {
  it('shows harmless headers and names the rest without their values', () => {
    expect(
      redactHeaders({
        Authorization: 'Bearer sk-live-abcdefghijklmnop',
        'x-api-key': 'sk-ant-abcdefghijklmnopqrst',
        'X-Team-Secret': 'hunter2hunter2',
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'x-ratelimit-remaining-requests': '99',
        'set-cookie': ['a=1', 'b=2'],
        gone: undefined,
      }),
    ).toEqual({
      authorization: WITHHELD,
      'x-api-key': WITHHELD,
      'x-team-secret': WITHHELD,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-ratelimit-remaining-requests': '99',
      'set-cookie': WITHHELD,
    });
  });

  it('withholds secret-shaped strings and the known secrets, whatever their shape, in a body', () => {
    const body = JSON.stringify({
      messages: [{ role: 'user', content: 'my key is sk-proj-ABCDEFGHIJKLMNOPQRSTUV and sbc_0123456789abcdefXYZ' }],
      note: 'Bearer abcdefghijklmnopqrstuvwxyz0123 and a plain word',
      custom: 'opaque!secret%value',
    });
    const shown = redactSecrets(body, ['opaque!secret%value', 'short']);
    expect(shown).not.toContain('sk-proj-ABCDEFGHIJKLMNOPQRSTUV');
    expect(shown).not.toContain('sbc_0123456789abcdefXYZ');
    expect(shown).not.toContain('abcdefghijklmnopqrstuvwxyz0123');
    expect(shown).not.toContain('opaque!secret%value');
    expect(shown).toContain('a plain word');
    // A known value too short to be a secret is left alone (it would blank ordinary words).
    expect(redactSecrets('a short story', ['short'])).toBe('a short story');
  });

  it('shows an upstream address without user info or query', () => {
    expect(shownUrl('https://user:pw@api.example.com', '/v1/chat/completions?key=abc')).toBe(
      'https://api.example.com/v1/chat/completions',
    );
  });

  it('keeps a body up to its limit and counts what passed it', () => {
    const text = new CappedText(8);
    text.add(Buffer.from('12345'));
    text.add('67890');
    text.add('abc');
    expect(text.text()).toBe('12345678');
    expect(text.dropped).toBe(5);
  });
});

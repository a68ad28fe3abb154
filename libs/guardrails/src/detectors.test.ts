import fc from 'fast-check';
import { luhnValid } from './checksums';
import { DetectorSet, detectorIssues, placeholderOf, type DetectorType } from './detectors';

const redactAll = (type: DetectorType, extra: object = {}) => new DetectorSet([{ type, action: 'redact', ...extra }]);
const redacted = (type: DetectorType, text: string, extra: object = {}) => redactAll(type, extra).apply(text).text;

describe('built-in detectors', () => {
  it.each([
    ['email', 'write to jane.doe+tag@mail.example.co.uk today', 'write to [REDACTED:email] today'],
    ['email', 'no address @ here, nor a@b, nor x@y.z', 'no address @ here, nor a@b, nor x@y.z'],
    ['card', 'card 4111 1111 1111 1111 exp', 'card [REDACTED:card] exp'],
    ['card', 'card 4111-1111-1111-1111.', 'card [REDACTED:card].'],
    ['card', 'card 5500005555555559', 'card [REDACTED:card]'],
    ['card', 'fails Luhn 4111 1111 1111 1112', 'fails Luhn 4111 1111 1111 1112'],
    ['card', 'order id 4111111111111111abc', 'order id 4111111111111111abc'],
    ['iban', 'pay GB82 WEST 1234 5698 7654 32 now', 'pay [REDACTED:iban] now'],
    ['iban', 'pay DE89370400440532013000.', 'pay [REDACTED:iban].'],
    ['iban', 'bad GB82 WEST 1234 5698 7654 33 now', 'bad GB82 WEST 1234 5698 7654 33 now'],
    ['phone', 'call +44 20 7946 0958 or (555) 123-4567', 'call [REDACTED:phone] or [REDACTED:phone]'],
    ['phone', 'on 2024-01-15 at 10.30 for 1,250', 'on 2024-01-15 at 10.30 for 1,250'],
    ['secret', 'key sk-proj-abcdefghijklmnop done', 'key [REDACTED:secret] done'],
    ['secret', 'Authorization: Bearer abcdefghijk123', 'Authorization: Bearer [REDACTED:secret]'],
  ] as const)('%s: %s', (type, text, expected) => {
    expect(redacted(type, text)).toBe(expected);
  });

  it.each([
    // A `(` or `+` right after a word opens no number (the scan once stood still there), though one may follow it.
    ['phone', 'print(x) then call(5551234567) or a+b', 'print(x) then call([REDACTED:phone]) or a+b'],
    // Letters that upper-case to more than one (ß to SS) move no offset.
    ['iban', 'Straße 5, DE89 3704 0044 0532 0130 00.', 'Straße 5, [REDACTED:iban].'],
    ['iban', 'pay gb82 west 1234 5698 7654 32', 'pay [REDACTED:iban]'],
  ] as const)('%s: %s', (type, text, expected) => {
    expect(redacted(type, text)).toBe(expected);
  });
});

describe("operators' patterns", () => {
  it('match with RE2 syntax, (?i) included', () => {
    expect(redacted('regex', 'Project ORION ships', { pattern: '(?i)project\\s+orion' })).toBe(
      '[REDACTED:regex] ships',
    );
  });

  it('refuse what RE2 cannot run in linear time, an empty pattern, one matching nothing at all, and a long one', () => {
    const issues = detectorIssues([
      { type: 'regex', action: 'block', pattern: '(a)\\1' },
      { type: 'regex', action: 'block', pattern: '(?=a)b' },
      { type: 'regex', action: 'block', pattern: '' },
      { type: 'regex', action: 'block', pattern: 'a*' },
      { type: 'regex', action: 'block', pattern: 'a'.repeat(501) },
      { type: 'regex', action: 'block' },
      { type: 'email', action: 'block', pattern: 'x' },
    ]);
    expect(issues.map((issue) => issue.path)).toEqual([
      'detectors.0.pattern',
      'detectors.1.pattern',
      'detectors.2.pattern',
      'detectors.3.pattern',
      'detectors.4.pattern',
      'detectors.5.pattern',
      'detectors.6.pattern',
    ]);
  });

  it('refuse a pattern that compiles to so large a program that scanning a text with it would stall the edge', () => {
    // 202 instructions: about 25 ms on 4 KB of one long word. `\\w{1,99}\\s` is 200, the most.
    expect(detectorIssues([{ type: 'regex', action: 'block', pattern: '\\w{1,100}\\s' }])).toEqual([
      { path: 'detectors.0.pattern', message: expect.stringContaining('too large') },
    ]);
    expect(detectorIssues([{ type: 'regex', action: 'block', pattern: '\\w{1,99}\\s' }])).toEqual([]);
  });

  it('a pattern that backtracks exponentially in JavaScript runs in linear time here', () => {
    const hostile = `${'a'.repeat(50_000)}!`;
    // `(a+)+$` takes JavaScript's engine 2^n steps on this text; RE2 reads it once.
    expect(
      new DetectorSet([{ type: 'regex', action: 'block', pattern: '(a+)+$' }]).apply(hostile).block,
    ).toBeUndefined();
  });
});

describe('word lists', () => {
  const set = new DetectorSet([{ type: 'words', action: 'block', words: ['Orion', 'launch date'] }]);

  it('match whole words and phrases, ignoring case', () => {
    expect(set.apply('the ORION plan').block?.type).toBe('words');
    expect(set.apply('what is the Launch  date? the launch date!').block).toBeDefined();
  });

  it('do not match inside other words', () => {
    expect(set.apply('orions and prelaunch dates').block).toBeUndefined();
  });

  it('refuse an empty list, a blank entry, or too many', () => {
    expect(detectorIssues([{ type: 'words', action: 'log', words: [] }])).toHaveLength(1);
    expect(detectorIssues([{ type: 'words', action: 'log', words: [' '] }])).toHaveLength(1);
    expect(detectorIssues([{ type: 'words', action: 'log', words: Array(1001).fill('w') }])).toHaveLength(1);
  });
});

describe('actions', () => {
  it('block reports the first block, redact replaces, log leaves the text and notes the finding', () => {
    const set = new DetectorSet([
      { type: 'email', action: 'log' },
      { type: 'card', action: 'redact' },
      { type: 'words', action: 'block', words: ['secretword'] },
    ]);
    const verdict = set.apply('a@b.io paid with 4111111111111111');
    expect(verdict).toMatchObject({ text: 'a@b.io paid with [REDACTED:card]', block: undefined });
    expect(verdict.logs.map((finding) => finding.type)).toEqual(['email']);
    expect(set.apply('say secretword').block).toMatchObject({ type: 'words', action: 'block' });
  });
});

/** A card number that passes Luhn: 15 random digits and the check digit. */
const cardNumber = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }).map((digits) => {
  const body = `4${digits.slice(1).join('')}`;
  for (let check = 0; check <= 9; check++) if (luhnValid(body + check)) return body + check;
  throw new Error('unreachable');
});
const filler = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '.', ',', '\n', 'é', 'x') });

describe('properties', () => {
  it('a Luhn-valid card number anywhere in text is found and redacted, grouped or not', () => {
    fc.assert(
      fc.property(filler, cardNumber, fc.boolean(), filler, (before, card, grouped, after) => {
        const shown = grouped ? card.replace(/(\d{4})(?=\d)/g, '$1 ') : card;
        const out = redacted('card', `${before} ${shown} ${after}`);
        expect(out).toContain(placeholderOf('card'));
        expect(out).not.toContain(card.slice(0, 8));
      }),
    );
  });

  it('redaction leaves text without findings unchanged, and its output holds no finding of the same detectors', () => {
    const set = new DetectorSet([
      { type: 'email', action: 'redact' },
      { type: 'card', action: 'redact' },
      { type: 'iban', action: 'redact' },
      { type: 'secret', action: 'redact' },
    ]);
    const piece = fc.oneof(filler, cardNumber, fc.constant('jo@example.org'), fc.constant('GB82WEST12345698765432'));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const text = pieces.join(' ');
        const once = set.apply(text).text;
        expect(set.findings(once)).toEqual([]);
        if (set.findings(text).length === 0) expect(once).toBe(text);
      }),
    );
  });
});

import fc from 'fast-check';
import { ibanValid, luhnValid } from './checksums';
import { DetectorSet, type DetectorType } from './detectors';
import { SECRET_PATTERNS } from './secrets';
import type { Span } from './span';

// The scanners skip ahead to anchors, share one lower-cased text and run a secret's pattern only over a text that
// holds a literal it needs. Each is held here to a plain reference that does none of that (a regular expression
// over the whole text, every pattern run), over random texts built from the characters the scanners decide on,
// with card numbers, IBANs, phone numbers, secrets and listed words planted in them.

const notAfterAlnum = '(?<![A-Za-z0-9])';
const alnumAt = (text: string, index: number) => /[A-Za-z0-9]/.test(text[index] ?? '');
const digitsOf = (run: string) => run.replace(/[^0-9]/g, '');

/** Maximal runs of a number's characters that start after no letter or digit and end before none. */
function numberRuns(text: string, run: RegExp): Array<{ span: Span; digits: string }> {
  const runs: Array<{ span: Span; digits: string }> = [];
  for (const match of text.matchAll(run)) {
    const digits = digitsOf(match[0]);
    // The number ends at its last digit: separators and parentheses after it are not part of it.
    const end = match.index + match[0].search(/[0-9][^0-9]*$/) + 1;
    if (digits.length > 0 && !alnumAt(text, end)) runs.push({ span: { start: match.index, end }, digits });
  }
  return runs;
}

const references: Partial<Record<DetectorType, (text: string) => Span[]>> = {
  card: (text) =>
    numberRuns(text, new RegExp(`${notAfterAlnum}[0-9](?:[ -]?[0-9])*`, 'g'))
      .filter(({ digits }) => digits.length >= 13 && digits.length <= 19 && luhnValid(digits))
      .map(({ span }) => span),
  // A `+` must be followed by a digit, a space, `-` or `.` too; a parenthesis may follow anything.
  phone: (text) =>
    numberRuns(text, new RegExp(`${notAfterAlnum}(?:\\+(?=[0-9])|\\(|[0-9])(?:[0-9()]|[ .-](?=[0-9]))*`, 'g'))
      .filter(({ span, digits }) =>
        text[span.start] === '+'
          ? digits.length >= 7 && digits.length <= 15
          : digits.length >= 10 && digits.length <= 11,
      )
      .map(({ span }) => span),
  iban: (text) => {
    const spans: Span[] = [];
    const anchor = new RegExp(`${notAfterAlnum}[A-Za-z]{2}[0-9]{2}`, 'g');
    for (let match = anchor.exec(text); match; match = anchor.exec(text)) {
      const groups = /^[A-Za-z0-9]+(?: [A-Za-z0-9]+)*/.exec(text.slice(match.index))![0];
      const compact = (end: number) => groups.slice(0, end).replaceAll(' ', '').toUpperCase();
      const ends = [...groups.matchAll(/[A-Za-z0-9]+/g)].map((group) => group.index + group[0].length);
      const end = ends.reverse().find((at) => compact(at).length <= 34 && ibanValid(compact(at)));
      if (end !== undefined) spans.push({ start: match.index, end: match.index + end });
      anchor.lastIndex = match.index + (end ?? 4);
    }
    return spans;
  },
  secret: (text) =>
    SECRET_PATTERNS.flatMap(({ pattern }) =>
      [...text.matchAll(pattern)].map((match) => ({
        start: match.index + (match[1]?.length ?? 0),
        end: match.index + match[0].length,
      })),
    ),
  words: (text) => wordsIn(text, WORDS),
};

/** Words of the text (the longest runs of letters, digits and `_`) that are on a list, ignoring case. */
function wordsIn(text: string, words: readonly string[]): Span[] {
  const lower = text.toLowerCase();
  const haystack = lower.length === text.length ? lower : text;
  return [...haystack.matchAll(/[\p{L}\p{N}_]+/gu)]
    .filter((match) => words.includes(match[0]))
    .map((match) => ({ start: match.index, end: match.index + match[0].length }));
}

/** A few words, searched for one by one; and a longer list, looked up at each word of the text. */
const WORDS = ['orion', 'straße', 'ключ', '𝐀𝐁'];
const MANY_WORDS = [...WORDS, 'a', 'z', 'a7', '_', 'é', 'xyz', 'ßß', 'ab'];

/** A Luhn-valid card number, grouped in fours or not. */
const card = fc
  .tuple(fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }), fc.boolean())
  .map(([digits, grouped]) => {
    const body = `4${digits.slice(1).join('')}`;
    const number = body + [...Array(10).keys()].find((check) => luhnValid(`${body}${check}`))!;
    return grouped ? number.replace(/(\d{4})(?=\d)/g, '$1 ') : number;
  });
const planted = fc.oneof(
  card,
  fc.constantFrom('GB82 WEST 1234 5698 7654 32', 'de89370400440532013000', 'GB82WEST12345698765432'),
  fc.constantFrom('+44 20 7946 0958', '(555) 123-4567', '555.123.4567', 'f(5551234567)', 'a+15551234567'),
  fc.constantFrom('sk-proj-abcdefghijk', 'Bearer abcdefgh123', 'API_KEY: "hunter22x"', 'ghp_0123456789abcdefghijABCD'),
  fc.constantFrom('Orion', 'STRASSE', 'Straße', 'КЛЮЧ', '𝐀𝐁', 'orion_x', 'jo@example.org'),
);
/** The characters the scanners decide on, and some they must let be. */
const noise = fc.string({
  unit: fc.constantFrom(...'aZ07  -.()+_:="éßİ\n', '𝐀'),
  maxLength: 12,
});
const text = fc.array(fc.oneof(noise, planted), { maxLength: 12 }).map((pieces) => pieces.join(''));

const sorted = (spans: readonly Span[]) =>
  spans.map(({ start, end }) => ({ start, end })).sort((a, b) => a.start - b.start || a.end - b.end);

describe('each built-in scanner finds what its plain reference finds', () => {
  it('words, from a long list', () => {
    const set = new DetectorSet([{ type: 'words', action: 'log', words: MANY_WORDS }]);
    fc.assert(
      fc.property(text, (sample) => {
        expect(sorted(set.findings(sample))).toEqual(sorted(wordsIn(sample, MANY_WORDS)));
      }),
      { numRuns: 2_000 },
    );
  });

  it.each(Object.keys(references) as DetectorType[])('%s', (type) => {
    const set = new DetectorSet([{ type, action: 'log', ...(type === 'words' ? { words: WORDS } : {}) }]);
    fc.assert(
      fc.property(text, (sample) => {
        expect(sorted(set.findings(sample))).toEqual(sorted(references[type]!(sample)));
      }),
      { numRuns: 2_000 },
    );
  });
});

import { ibanValid, luhnValid } from './checksums';
import type { Span } from './span';

// The built-in detectors' scanners. Each walks the text once, left to right, and looks a bounded distance around
// an anchor (an `@`, a digit run, a country code), so a hostile text costs time linear in its length: no regular
// expression that could backtrack runs over what a caller sends. (Operators' own patterns run on a linear-time
// engine: see patterns.ts.) Most of a prompt is words, where no anchor is: the scanners skip to the next anchor
// with a short regular expression of fixed width, which the engine runs as a native search, rather than look at
// each character in JavaScript.

const isDigit = (code: number) => code >= 48 && code <= 57;
const isUpper = (code: number) => code >= 65 && code <= 90;
const isLower = (code: number) => code >= 97 && code <= 122;
const isAlnum = (code: number) => isDigit(code) || isUpper(code) || isLower(code);
/** Characters of an e-mail address's local part (RFC 5322's atext, less the rare ones). */
const isLocal = (code: number) =>
  isAlnum(code) || code === 46 || code === 95 || code === 37 || code === 43 || code === 45;
const isDomain = (code: number) => isAlnum(code) || code === 46 || code === 45;

const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;
const TOP_LEVEL_DOMAIN = /^[A-Za-z]+$/;

/** E-mail addresses: `local@domain.tld`, the top-level domain two letters or more. */
export function findEmails(text: string): Span[] {
  const spans: Span[] = [];
  let from = 0;
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > from && at - start < MAX_LOCAL && isLocal(text.charCodeAt(start - 1))) start--;
    while (start < at && text.charCodeAt(start) === 46) start++;
    if (start === at) continue;
    let end = at + 1;
    while (end < text.length && end - at <= MAX_DOMAIN && isDomain(text.charCodeAt(end))) end++;
    while (end > at + 1 && !isAlnum(text.charCodeAt(end - 1))) end--;
    const domain = text.slice(at + 1, end);
    const dot = domain.lastIndexOf('.');
    const tld = dot < 0 ? '' : domain.slice(dot + 1);
    if (dot <= 0 || tld.length < 2 || !TOP_LEVEL_DOMAIN.test(tld)) continue;
    spans.push({ start, end });
    from = end;
    at = end - 1;
  }
  return spans;
}

/** Where a run of digits may start: a digit, or for phones also `+` and `(` (global, for `lastIndex`). */
const DIGIT = /[0-9]/g;
const PHONE_START = /[0-9+(]/g;

/**
 * Where the first match of the global `anchor`, whose every match is `width` characters, starts at or after
 * `from`, or -1. `test` moves `lastIndex` past the match without making a match object.
 */
function nextAt(anchor: RegExp, text: string, from: number, width = 1): number {
  anchor.lastIndex = from;
  return anchor.test(text) ? anchor.lastIndex - width : -1;
}

/**
 * Runs of digits with the separators people write inside numbers (a space, `-`, `.`, `/`, and parentheses for
 * phones), one separator at a time. Calls `take` with each run's span and its digits.
 */
function digitRuns(text: string, separators: string, take: (span: Span, digits: string) => void): void {
  const opening = separators.includes('(') ? PHONE_START : DIGIT;
  let index = 0;
  while (index < text.length) {
    index = nextAt(opening, text, index);
    if (index < 0) return;
    if (index > 0 && isAlnum(text.charCodeAt(index - 1))) {
      // A digit inside a word or an id starts no number; nor does a `+` or `(` right after one (`f(x)`, `a+1`),
      // though a number may follow it.
      if (isAlnum(text.charCodeAt(index))) while (index < text.length && isAlnum(text.charCodeAt(index))) index++;
      else index++;
      continue;
    }
    const start = index;
    let digits = '';
    let end = index;
    let separated = true;
    while (index < text.length) {
      const char = text[index]!;
      if (isDigit(char.charCodeAt(0))) {
        digits += char;
        end = index + 1;
        separated = false;
      } else if ((index === start && (char === '+' || char === '(')) || (separators.includes(char) && !separated)) {
        separated = char !== ')' && char !== '(';
      } else break;
      index++;
    }
    // A run that goes on into letters (an id, a word) is no number.
    if (end < text.length && isAlnum(text.charCodeAt(end))) continue;
    if (digits.length > 0) take({ start, end }, digits);
  }
}

/** Payment card numbers: 13 to 19 digits, grouped by spaces or dashes or not, that pass the Luhn check. */
export function findCards(text: string): Span[] {
  const spans: Span[] = [];
  digitRuns(text, ' -', (span, digits) => {
    if (digits.length >= 13 && digits.length <= 19 && luhnValid(digits)) spans.push(span);
  });
  return spans;
}

/**
 * Phone numbers: an international number (`+` and 7 to 15 digits) or a national one of 10 or 11 digits, with the
 * usual separators; shorter runs (dates, amounts, years) are not phones.
 */
export function findPhones(text: string): Span[] {
  const spans: Span[] = [];
  digitRuns(text, ' -.()', (span, digits) => {
    const international = text[span.start] === '+';
    const count = digits.length;
    if (international ? count >= 7 && count <= 15 : count >= 10 && count <= 11) spans.push(span);
  });
  return spans;
}

/** Where an IBAN may start: a country code and two digits, after no letter or digit. Global, for `lastIndex`. */
const IBAN_START = /(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}/g;
const IBAN_START_WIDTH = 4;
const MAX_IBAN = 34;

/**
 * IBANs: a country code, two check digits and up to 30 letters or digits (either case), grouped by spaces or not,
 * mod-97 valid.
 */
export function findIbans(text: string): Span[] {
  const spans: Span[] = [];
  for (let start = nextAt(IBAN_START, text, 0, IBAN_START_WIDTH); start >= 0;) {
    const end = ibanEnd(text, start);
    if (end !== undefined) spans.push({ start, end });
    start = nextAt(IBAN_START, text, end ?? start + IBAN_START_WIDTH, IBAN_START_WIDTH);
  }
  return spans;
}

/**
 * The end of the IBAN that starts at `start`, if one does: the longest run of groups from there, then shorter
 * ones at group ends until one checks out.
 */
function ibanEnd(text: string, start: number): number | undefined {
  const ends: number[] = [];
  let length = 0;
  let at = start;
  while (at < text.length && length < MAX_IBAN) {
    if (isAlnum(text.charCodeAt(at))) {
      length++;
      at++;
      if (at === text.length || !isAlnum(text.charCodeAt(at))) ends.push(at);
    } else if (text.charCodeAt(at) === 32 && at + 1 < text.length && isAlnum(text.charCodeAt(at + 1))) at++;
    else break;
  }
  for (let index = ends.length - 1; index >= 0; index--) {
    const end = ends[index]!;
    if (ibanValid(text.slice(start, end).replaceAll(' ', '').toUpperCase())) return end;
  }
  return undefined;
}

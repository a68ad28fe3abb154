import { ibanValid, luhnValid } from './checksums';
import type { Span } from './span';

// The built-in detectors' scanners. Each walks the text once, left to right, and looks a bounded distance around
// an anchor (an `@`, a digit run, a country code), so a hostile text costs time linear in its length: no regular
// expression that could backtrack runs over what a caller sends. (Operators' own patterns run on a linear-time
// engine: see patterns.ts.)

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
    if (dot <= 0 || tld.length < 2 || !/^[A-Za-z]+$/.test(tld)) continue;
    spans.push({ start, end });
    from = end;
    at = end - 1;
  }
  return spans;
}

/**
 * Runs of digits with the separators people write inside numbers (a space, `-`, `.`, `/`, and parentheses for
 * phones), one separator at a time. Calls `take` with each run's span and its digits.
 */
function digitRuns(text: string, separators: string, take: (span: Span, digits: string) => void): void {
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    const opensPhone = (code === 43 || code === 40) && separators.includes('(');
    if (!isDigit(code) && !opensPhone) {
      index++;
      continue;
    }
    if (index > 0 && isAlnum(text.charCodeAt(index - 1))) {
      while (index < text.length && isAlnum(text.charCodeAt(index))) index++;
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

/** IBANs: a country code, two check digits and up to 30 letters or digits, grouped by spaces or not, mod-97 valid. */
export function findIbans(text: string): Span[] {
  const spans: Span[] = [];
  const upper = text.toUpperCase();
  let index = 0;
  while (index + 4 <= upper.length) {
    const start = index;
    const anchored =
      isUpper(upper.charCodeAt(index)) &&
      isUpper(upper.charCodeAt(index + 1)) &&
      isDigit(upper.charCodeAt(index + 2)) &&
      isDigit(upper.charCodeAt(index + 3)) &&
      (index === 0 || !isAlnum(upper.charCodeAt(index - 1)));
    if (!anchored) {
      index++;
      continue;
    }
    // The longest run of groups from here, then shorter ones at group ends until one checks out.
    const ends: number[] = [];
    let compact = '';
    let at = index;
    while (at < upper.length && compact.length < 34) {
      const code = upper.charCodeAt(at);
      if (isAlnum(code)) {
        compact += upper[at];
        at++;
        if (at === upper.length || !isAlnum(upper.charCodeAt(at))) ends.push(at);
      } else if (code === 32 && at + 1 < upper.length && isAlnum(upper.charCodeAt(at + 1))) at++;
      else break;
    }
    const found = ends
      .reverse()
      .find(
        (end) => (end === upper.length || !isAlnum(upper.charCodeAt(end))) && ibanValid(compactOf(upper, start, end)),
      );
    if (found !== undefined) {
      spans.push({ start, end: found });
      index = found;
    } else index += 4;
  }
  return spans;
}

const compactOf = (text: string, start: number, end: number) => text.slice(start, end).replace(/ /g, '');

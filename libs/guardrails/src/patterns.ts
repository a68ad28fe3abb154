import { RE2JS } from 're2js';
import type { Span } from './span';

// Operators' own patterns and word lists. A pattern runs on RE2JS, a port of RE2: its matching time is linear in
// the text whatever the pattern, so a pattern written carelessly (or with intent) cannot stall the edge on a
// hostile prompt, which JavaScript's own backtracking engine cannot promise. RE2 refuses what would need
// backtracking (backreferences, lookaround); such a pattern is a validation error when the guardrail is saved.
// Linear is not yet cheap: where a match is, RE2JS finds by visiting each of the pattern's instructions at each
// character (its DFA only says whether there is one), and a short pattern can compile to many: `\w{1,999}\s` is
// 2,000, and costs 340 ms on a 4 KB text of one long word. So the compiled program is bounded too: at the bound,
// the worst text found costs about 25 ms per 4 KB; a 40-word alternation is 130 (a longer list is a `words`
// detector's).

/** The longest pattern a detector may hold. */
export const MAX_PATTERN_LENGTH = 500;
/** The most instructions a pattern may compile to (RE2's program size). */
const MAX_PATTERN_PROGRAM = 200;
/** Most entries of a word list, and the longest entry. */
export const MAX_WORDS = 1_000;
export const MAX_WORD_LENGTH = 100;

/** Why `pattern` cannot be a detector's, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'pattern must not be empty.';
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern must be at most ${MAX_PATTERN_LENGTH} characters.`;
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    return `pattern is not a valid RE2 expression: ${error instanceof Error ? error.message : String(error)}`;
  }
  const size = compiled.programSize();
  if (size > MAX_PATTERN_PROGRAM)
    return (
      `pattern is too large: it compiles to ${size} RE2 instructions, more than ${MAX_PATTERN_PROGRAM} ` +
      '(use smaller repeats, or a words detector for a list).'
    );
  return compiled.matches('') ? 'pattern must not match the empty text.' : undefined;
}

/**
 * Finds every match of a compiled operator pattern. Most texts hold none: whether one does is asked first of
 * RE2's DFA (`test`, no positions asked), which reads the text once; only a text with a match is searched for
 * where, which RE2JS does with an engine that reads it again from each place a match may start.
 */
export function patternFinder(pattern: string): (text: string) => Span[] {
  const compiled = RE2JS.compile(pattern);
  return (text) => {
    const spans: Span[] = [];
    if (!compiled.test(text)) return spans;
    const matcher = compiled.matcher(text);
    while (matcher.find()) {
      const start = matcher.start();
      const end = matcher.end();
      // An empty match (a pattern like `a*` in the middle of a text) marks nothing.
      if (end > start) spans.push({ start, end });
    }
    return spans;
  };
}

/** Why `words` cannot be a detector's list, or undefined when it can. */
export function wordsProblem(words: readonly string[]): string | undefined {
  if (words.length === 0) return 'words must hold at least one entry.';
  if (words.length > MAX_WORDS) return `words may hold at most ${MAX_WORDS} entries.`;
  if (words.some((word) => word.trim().length === 0 || word.length > MAX_WORD_LENGTH))
    return `each entry of words must be 1 to ${MAX_WORD_LENGTH} characters, not blank.`;
  return undefined;
}

const WORD = /[\p{L}\p{N}_]+/gu;
/** A character of a word: a letter or digit of any script, or `_`. */
const WORD_CHAR = /[\p{L}\p{N}_]/u;
/** The same, read at `lastIndex`. */
const WORD_CHAR_AT = /[\p{L}\p{N}_]/uy;

/**
 * How many UTF-16 units the character at `at` takes (two for one outside the BMP), negative when it is no
 * character of a word. ASCII, most of a prompt, is decided without the regular expression.
 */
function wordCharAt(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code < 128)
    return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
      ? 1
      : -1;
  WORD_CHAR_AT.lastIndex = at;
  if (WORD_CHAR_AT.test(text)) return WORD_CHAR_AT.lastIndex - at;
  // A surrogate pair that is no letter or digit is skipped whole, as the pattern of words reads it.
  const pair = code >= 0xd800 && code <= 0xdbff && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00;
  return pair ? -2 : -1;
}

/** Whether the word at `at` of `length` units is one of `text`: no character of a word right before or after it. */
function wholeWordAt(text: string, at: number, length: number): boolean {
  const end = at + length;
  if (end < text.length && wordCharAt(text, end) > 0) return false;
  if (at === 0) return true;
  // The character before may be a surrogate pair ending there.
  const pair =
    at >= 2 && (text.charCodeAt(at - 1) & 0xfc00) === 0xdc00 && (text.charCodeAt(at - 2) & 0xfc00) === 0xd800;
  return wordCharAt(text, pair ? at - 2 : at - 1) < 0;
}

/** Up to this many single words, each is searched for; a longer list is looked up at each word of the text. */
const SEARCHED_WORDS = 8;

/**
 * Finds whole words and phrases of a list, ignoring case: phrases and a few single words by search, many single
 * words by one pass over the text's words (a set lookup each, only for words of a length the list has). `Ban`
 * matches `ban` and `BAN`, not `banner`. `lower` is the text lower-cased, when the caller has it.
 */
export function wordsFinder(words: readonly string[]): (text: string, lower?: string) => Span[] {
  const singles = new Set<string>();
  const phrases: string[] = [];
  for (const word of words) {
    const entry = word.trim().toLowerCase();
    if ((entry.match(WORD) ?? []).join('') === entry) singles.add(entry);
    else phrases.push(entry);
  }
  const lengths = new Set([...singles].map((single) => single.length));
  return (text, lower = text.toLowerCase()) => {
    const spans: Span[] = [];
    // Lower-casing keeps the offsets of almost every script; a text where it does not is searched as is.
    const haystack = lower.length === text.length ? lower : text;
    if (singles.size <= SEARCHED_WORDS)
      for (const single of singles)
        for (let at = haystack.indexOf(single); at >= 0; at = haystack.indexOf(single, at + 1))
          if (wholeWordAt(haystack, at, single.length)) spans.push({ start: at, end: at + single.length });
    if (singles.size > SEARCHED_WORDS)
      for (let start = 0, at = 0; at <= haystack.length;) {
        const step = at < haystack.length ? wordCharAt(haystack, at) : -1;
        if (step > 0) {
          at += step;
          continue;
        }
        // `at` ends the word that began at `start`, if any did.
        const length = at - start;
        if (length > 0 && lengths.has(length) && singles.has(haystack.slice(start, at))) spans.push({ start, end: at });
        at -= step;
        start = at;
      }
    for (const phrase of phrases) {
      for (let at = haystack.indexOf(phrase); at >= 0; at = haystack.indexOf(phrase, at + phrase.length)) {
        const before = at === 0 ? '' : haystack[at - 1]!;
        const after = haystack[at + phrase.length] ?? '';
        if (!WORD_CHAR.test(before) && !WORD_CHAR.test(after)) spans.push({ start: at, end: at + phrase.length });
      }
    }
    return spans;
  };
}

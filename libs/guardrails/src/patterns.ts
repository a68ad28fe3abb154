import { RE2JS } from 're2js';
import type { Span } from './span';

// Operators' own patterns and word lists. A pattern runs on RE2JS, a port of RE2: its matching time is linear in
// the text whatever the pattern, so a pattern written carelessly (or with intent) cannot stall the edge on a
// hostile prompt, which JavaScript's own backtracking engine cannot promise. RE2 refuses what would need
// backtracking (backreferences, lookaround); such a pattern is a validation error when the guardrail is saved.

/** The longest pattern a detector may hold. */
export const MAX_PATTERN_LENGTH = 500;
/** Most entries of a word list, and the longest entry. */
export const MAX_WORDS = 1_000;
export const MAX_WORD_LENGTH = 100;

/** Why `pattern` cannot be a detector's, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'pattern must not be empty.';
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern must be at most ${MAX_PATTERN_LENGTH} characters.`;
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    return `pattern is not a valid RE2 expression: ${error instanceof Error ? error.message : String(error)}`;
  }
  return RE2JS.compile(pattern).matches('') ? 'pattern must not match the empty text.' : undefined;
}

/** Finds every match of a compiled operator pattern. */
export function patternFinder(pattern: string): (text: string) => Span[] {
  const compiled = RE2JS.compile(pattern);
  return (text) => {
    const spans: Span[] = [];
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

/**
 * Finds whole words and phrases of a list, ignoring case: single words by one pass over the text's words (a set
 * lookup each), phrases by search. `Ban` matches `ban` and `BAN`, not `banner`.
 */
export function wordsFinder(words: readonly string[]): (text: string) => Span[] {
  const singles = new Set<string>();
  const phrases: string[] = [];
  for (const word of words) {
    const entry = word.trim().toLowerCase();
    if ((entry.match(WORD) ?? []).join('') === entry) singles.add(entry);
    else phrases.push(entry);
  }
  return (text) => {
    const spans: Span[] = [];
    const lower = text.toLowerCase();
    // Lower-casing keeps the offsets of almost every script; a text where it does not is searched as is.
    const haystack = lower.length === text.length ? lower : text;
    if (singles.size > 0)
      for (const match of haystack.matchAll(WORD))
        if (singles.has(match[0])) spans.push({ start: match.index, end: match.index + match[0].length });
    for (const phrase of phrases) {
      for (let at = haystack.indexOf(phrase); at >= 0; at = haystack.indexOf(phrase, at + phrase.length)) {
        const before = at === 0 ? '' : haystack[at - 1]!;
        const after = haystack[at + phrase.length] ?? '';
        if (!/[\p{L}\p{N}_]/u.test(before) && !/[\p{L}\p{N}_]/u.test(after))
          spans.push({ start: at, end: at + phrase.length });
      }
    }
    return spans;
  };
}

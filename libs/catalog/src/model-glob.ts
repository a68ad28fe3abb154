/**
 * The caller key's `allowed_models`: globs over model names, checked on every model call.
 *
 * `*` matches any run of characters, `/` included (so `my-vllm/*` covers every model of one upstream); `?`
 * matches exactly one character (a code point, so one emoji is one character); everything else matches
 * itself, case-sensitively. There is no escape syntax: model names do not contain `*` or `?`.
 *
 * Matching is done by hand rather than by translating to a RegExp: both the globs and the model name come
 * from callers, and a RegExp such as `^.*a.*a.*a.*b$` backtracks exponentially on a long name of `a`s. The
 * loop below backtracks only to the last `*`, so a match costs at most pattern length x name length steps.
 */

type Compiled = { kind: 'any' } | { kind: 'exact'; text: string } | { kind: 'glob'; chars: readonly string[] };

// Distinct globs are few (they come from keys), but a cap keeps a flood of odd keys from growing this forever.
const MAX_CACHED_GLOBS = 10_000;
const compiledGlobs = new Map<string, Compiled>();

// A cached key hands the same array to every call, so its compiled list is found by identity first.
const compiledLists = new WeakMap<readonly string[], readonly Compiled[]>();

function compile(glob: string): Compiled {
  const cached = compiledGlobs.get(glob);
  if (cached) return cached;
  let compiled: Compiled;
  if (!glob.includes('*') && !glob.includes('?')) compiled = { kind: 'exact', text: glob };
  else if (/^\*+$/.test(glob)) compiled = { kind: 'any' };
  else compiled = { kind: 'glob', chars: Array.from(glob) };
  if (compiledGlobs.size >= MAX_CACHED_GLOBS) compiledGlobs.clear();
  compiledGlobs.set(glob, compiled);
  return compiled;
}

function compileList(globs: readonly string[]): readonly Compiled[] {
  const cached = compiledLists.get(globs);
  if (cached) return cached;
  const compiled = globs.map(compile);
  compiledLists.set(globs, compiled);
  return compiled;
}

function matchChars(pattern: readonly string[], name: readonly string[]): boolean {
  let p = 0;
  let n = 0;
  let star = -1; // index in pattern of the last `*` seen
  let resume = 0; // index in name where that `*` would next take one more character
  while (n < name.length) {
    const token = pattern[p];
    if (token === '*') {
      star = p++;
      resume = n;
    } else if (token !== undefined && (token === '?' || token === name[n])) {
      p++;
      n++;
    } else if (star >= 0) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

function matches(compiled: Compiled, model: string, chars: () => readonly string[]): boolean {
  switch (compiled.kind) {
    case 'any':
      return true;
    case 'exact':
      return compiled.text === model;
    case 'glob':
      return matchChars(compiled.chars, chars());
  }
}

/**
 * Whether a key may name a model. Absent (`undefined` or `null`) means every model; an empty list means none,
 * as the spec's "absent means every model" implies for a list that is present.
 */
export function modelAllowed(globs: readonly string[] | null | undefined, model: string): boolean {
  if (globs === undefined || globs === null) return true;
  let split: readonly string[] | undefined;
  const chars = () => (split ??= Array.from(model));
  return compileList(globs).some((compiled) => matches(compiled, model, chars));
}

/**
 * Strings that PostgreSQL refuses in `text` (a NUL) or that are not Unicode at all (a lone UTF-16 surrogate,
 * which JSON's `\ud800` escapes can spell) must not get past the edge: one of them in a usage event once
 * stopped the ledger for every account. A request carrying one anywhere (path, query or body, on the model
 * routes and the REST surface alike) is refused up front.
 */

/** A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSAFE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isUnsafe(text: string): boolean {
  return UNSAFE.test(text);
}

/**
 * JSON text can spell a NUL or a lone surrogate only with a `\u` escape: a raw control character is not JSON,
 * and text decoded from UTF-8 holds surrogates only in pairs. A body without such an escape (almost every one)
 * needs no walk of its parsed value; one with it (an escaped backslash before `u0000` or a surrogate pair
 * match too) gets the walk, which has the last word.
 */
const UNSAFE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;

/** Whether strings parsed from this JSON text may be unsafe (see findUnsafeString); false means none are. */
export function mayHoldUnsafeStrings(jsonText: string): boolean {
  return UNSAFE_ESCAPE.test(jsonText);
}

/**
 * The dotted path (`messages.0.content`) of the first string, object key included, that is unsafe; undefined
 * when there is none. Walks without recursion, so a deeply nested body cannot overflow the stack.
 */
export function findUnsafeString(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  const join = (path: string, key: string | number) => (path === '' ? String(key) : `${path}.${key}`);
  while (stack.length > 0) {
    const { value: item, path } = stack.pop()!;
    if (typeof item === 'string') {
      if (isUnsafe(item)) return path;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push({ value: item[i], path: join(path, i) });
    } else if (item !== null && typeof item === 'object') {
      const keys = Object.keys(item);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        if (isUnsafe(key)) return join(path, key.replace(/[\0\uD800-\uDFFF]/g, '\uFFFD'));
        stack.push({ value: (item as Record<string, unknown>)[key], path: join(path, key) });
      }
    }
  }
  return undefined;
}

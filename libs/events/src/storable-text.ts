// A lone surrogate: a high half not followed by a low half, or a low half not preceded by a high half.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// Cheap pre-test: most strings hold no NUL and no surrogate at all, and then nothing is allocated.
const SUSPECT = /[\0\uD800-\uDFFF]/;

/**
 * A string as every store downstream of the bus accepts it: without NUL (PostgreSQL text refuses it) and
 * with each lone surrogate replaced by U+FFFD (it has no UTF-8 form, so protobuf and PostgreSQL would
 * otherwise see different text or refuse it). Valid text, surrogate pairs included, comes back unchanged.
 */
export function storableText(value: string): string {
  if (!SUSPECT.test(value)) return value;
  return value.replaceAll('\0', '').replace(LONE_SURROGATE, '\uFFFD');
}

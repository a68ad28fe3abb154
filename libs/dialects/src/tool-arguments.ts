import { isObject, type JsonObject } from './json';

/**
 * Tool-call arguments cross between OpenAI's JSON text and Anthropic's `input` object.
 *
 * Text that is not a JSON object (cut off by `max_tokens`, or a model that wrote prose) cannot be dropped, or
 * the call and its result no longer pair up, and cannot be sent as text, because Anthropic demands an object.
 * It becomes `{"_raw": "<text>"}`: the request stays valid, and whoever reads the input (the tool or the
 * model on replay) sees exactly what was produced.
 */
const RAW_ARGUMENTS_KEY = '_raw';

export function parseToolArguments(text: string): JsonObject {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // falls through to the wrapped form
  }
  return { [RAW_ARGUMENTS_KEY]: text };
}

/** The inverse: an object back to JSON text; a wrapped `_raw` input goes back to the text it came from. */
export function stringifyToolInput(input: unknown): string {
  if (input === undefined || input === null) return '{}';
  if (isObject(input)) {
    const keys = Object.keys(input);
    const raw = input[RAW_ARGUMENTS_KEY];
    if (keys.length === 1 && typeof raw === 'string') return raw;
  }
  return JSON.stringify(input);
}

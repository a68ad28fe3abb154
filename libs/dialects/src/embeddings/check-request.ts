import type { DialectIssue } from '../request-error';

/**
 * OpenAI's limits on `POST /v1/embeddings` (its OpenAPI document, CreateEmbeddingRequest): at most 2,048 inputs
 * per call, no empty input, and tokens as whole numbers.
 */
export const MAX_EMBEDDING_INPUTS = 2_048;

/** The encodings OpenAI's API answers in: a list of floats, or base64 of little-endian float32s. */
const ENCODING_FORMATS = ['float', 'base64'] as const;

const isToken = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** One token array (`input` itself, or one item of it): non-empty, whole non-negative numbers. */
function checkTokens(tokens: readonly unknown[], path: string, issues: DialectIssue[]): void {
  if (tokens.length === 0) {
    issues.push({ path, code: 'too_small', message: `${path} must not be an empty token array.` });
    return;
  }
  const bad = tokens.findIndex((token) => !isToken(token));
  if (bad >= 0)
    issues.push({
      path: `${path}.${bad}`,
      code: 'invalid_type',
      message: `${path}.${bad} must be a token: a whole number of 0 or more.`,
    });
}

/**
 * `input`: a string, an array of strings, an array of tokens, or an array of token arrays (never a mix of
 * kinds), none of them empty.
 */
function checkInput(input: unknown, issues: DialectIssue[]): void {
  if (input === undefined || input === null) {
    issues.push({ path: 'input', code: 'required', message: 'input is required: the text (or texts) to embed.' });
    return;
  }
  if (typeof input === 'string') {
    if (input === '') issues.push({ path: 'input', code: 'too_small', message: 'input must not be empty.' });
    return;
  }
  if (!Array.isArray(input)) {
    const message = 'input must be a string, an array of strings, an array of tokens or an array of token arrays.';
    issues.push({ path: 'input', code: 'invalid_type', message });
    return;
  }
  if (input.length === 0) {
    issues.push({ path: 'input', code: 'too_small', message: 'input must not be an empty array.' });
    return;
  }
  if (input.length > MAX_EMBEDDING_INPUTS) {
    const message = `input holds ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} can be embedded in one call.`;
    issues.push({ path: 'input', code: 'invalid_value', message });
    return;
  }
  const first = input[0];
  if (typeof first === 'number') return checkTokens(input, 'input', issues);
  input.forEach((item: unknown, index) => {
    const path = `input.${index}`;
    if (typeof first === 'string') {
      if (typeof item !== 'string')
        issues.push({ path, code: 'invalid_type', message: `${path} must be a string, as the first item is.` });
      else if (item === '') issues.push({ path, code: 'too_small', message: `${path} must not be empty.` });
    } else if (Array.isArray(first)) {
      if (Array.isArray(item)) checkTokens(item, path, issues);
      else issues.push({ path, code: 'invalid_type', message: `${path} must be a token array, as the first item is.` });
    } else {
      const message = `${path} must be a string, a token or a token array.`;
      issues.push({ path, code: 'invalid_type', message });
    }
  });
}

/**
 * The checks an embeddings body needs before it is routed. `dimensions` is checked against the model once the
 * model is known (the gateway's model-kind step); here only its type.
 */
export function checkEmbeddingsRequest(body: Readonly<Record<string, unknown>>): DialectIssue[] {
  const issues: DialectIssue[] = [];
  checkInput(body.input, issues);
  const { dimensions, encoding_format: encoding, user } = body;
  if (
    dimensions !== undefined &&
    (typeof dimensions !== 'number' || !Number.isSafeInteger(dimensions) || dimensions < 1)
  )
    issues.push({
      path: 'dimensions',
      code: 'invalid_value',
      message: 'dimensions must be a whole number of 1 or more.',
    });
  if (encoding !== undefined && !ENCODING_FORMATS.includes(encoding as (typeof ENCODING_FORMATS)[number]))
    issues.push({
      path: 'encoding_format',
      code: 'invalid_value',
      message: `encoding_format must be one of ${ENCODING_FORMATS.join(', ')}.`,
    });
  if (user !== undefined && typeof user !== 'string')
    issues.push({ path: 'user', code: 'invalid_type', message: 'user must be a string.' });
  if (body.stream === true)
    issues.push({ path: 'stream', code: 'unsupported', message: 'Embeddings are answered whole; they do not stream.' });
  return issues;
}

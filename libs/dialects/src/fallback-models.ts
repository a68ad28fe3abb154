import type { DialectIssue } from './request-error';

/** Fallback models a caller may name (OpenRouter's `models`); more would only add attempts a call cannot make. */
export const MAX_FALLBACK_MODELS = 8;

/**
 * The body field `models`: model ids tried in order once the named model's targets are exhausted. Every dialect
 * accepts it; it is the gateway's own, so no upstream is ever sent it (the passthroughs drop it, and the neutral
 * form never carries it).
 */
export function checkFallbackModels(body: Readonly<Record<string, unknown>>): DialectIssue[] {
  const models = body.models;
  if (models === undefined) return [];
  if (!Array.isArray(models))
    return [{ path: 'models', code: 'invalid_type', message: 'models must be an array of model ids.' }];
  if (models.length === 0 || models.length > MAX_FALLBACK_MODELS) {
    const message = `models must list 1 to ${MAX_FALLBACK_MODELS} model ids.`;
    return [{ path: 'models', code: models.length === 0 ? 'too_small' : 'invalid_value', message }];
  }
  const issues: DialectIssue[] = [];
  models.forEach((model, index) => {
    if (typeof model !== 'string' || model === '')
      issues.push({
        path: `models.${index}`,
        code: 'invalid_type',
        message: 'Each model id must be a non-empty string.',
      });
  });
  return issues;
}

/** The fallback model ids of a body `checkFallbackModels` passed; none when the caller named none. */
export function fallbackModelsOf(body: Readonly<Record<string, unknown>>): readonly string[] {
  return Array.isArray(body.models) ? (body.models as string[]) : [];
}

/** A passed-through body without the gateway's own field. */
export function withoutFallbackModels(sent: Record<string, unknown>): Record<string, unknown> {
  if ('models' in sent) delete sent.models;
  return sent;
}

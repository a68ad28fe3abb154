import { guessScalar } from './classify';

/** A body as the learner reads it: its media type and, when it has a structure we can describe, the value. */
export type ParsedBody =
  { mediaType: string; kind: 'json' | 'form'; value: unknown } | { mediaType: string; kind: 'text' | 'binary' };

/**
 * `application/json; charset=utf-8` → `application/json`. Parameters are dropped (a multipart boundary is
 * a random value); anything that is not a plain `type/subtype` is not printed at all.
 */
function mediaTypeOf(contentType: string | undefined): string | undefined {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  return mediaType && /^[a-z]+\/[a-z0-9.+-]{1,64}$/.test(mediaType) ? mediaType : undefined;
}

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/**
 * Form fields with their likely JSON types (`amount=2000` → 2000, `capture=true` → true), so a form body is
 * described like a JSON one. A repeated name or a `name[]` becomes an array.
 */
function formFields(text: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const params = new URLSearchParams(text);
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name).map((raw) => guessScalar(raw).value);
    fields[name] = values.length > 1 || name.endsWith('[]') ? values : values[0];
  }
  return fields;
}

/** Reads an observed body; undefined when there is none. */
export function parseBody(body: unknown, contentType: string | undefined): ParsedBody | undefined {
  if (body === undefined || body === null || body === '') return undefined;
  const mediaType = mediaTypeOf(contentType) ?? (typeof body === 'string' ? 'text/plain' : 'application/json');
  if (isJsonMediaType(mediaType)) {
    if (typeof body !== 'string') return { mediaType, kind: 'json', value: body };
    try {
      return { mediaType, kind: 'json', value: JSON.parse(body) };
    } catch {
      return { mediaType, kind: 'text' };
    }
  }
  if (mediaType === 'application/x-www-form-urlencoded' && typeof body === 'string')
    return { mediaType, kind: 'form', value: formFields(body) };
  return { mediaType, kind: mediaType.startsWith('text/') ? 'text' : 'binary' };
}

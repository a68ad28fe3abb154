import type { DocumentBlock, ImageBlock } from './ir';

/**
 * `data:<mime>;base64,<data>` ↔ `{mediaType, data}`. Found with `indexOf` and `slice` rather than a regular
 * expression over the whole URL: images run to megabytes, and V8 slices share the original string's memory.
 */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const header = url.slice(5, comma);
  const params = header.split(';');
  if (!params.slice(1).some((param) => param.trim().toLowerCase() === 'base64')) return undefined;
  return { mediaType: (params[0] ?? '').trim().toLowerCase(), data: url.slice(comma + 1) };
}

export const toDataUrl = (mediaType: string, data: string): string => `data:${mediaType};base64,${data}`;

export type DataUrlOutcome<T> = { ok: T } | { error: string };

/** An OpenAI image URL (https or base64 data URL) as a neutral image. */
export function imageFromUrl(url: string, detail?: ImageBlock['detail']): DataUrlOutcome<ImageBlock> {
  let block: ImageBlock;
  if (url.startsWith('data:')) {
    const parsed = parseDataUrl(url);
    if (!parsed || parsed.mediaType === '')
      return { error: 'must be an https URL or a base64 data URL (data:<mime>;base64,…)' };
    block = { type: 'image', source: { kind: 'base64', mediaType: parsed.mediaType, data: parsed.data } };
  } else {
    block = { type: 'image', source: { kind: 'url', url } };
  }
  if (detail !== undefined) block.detail = detail;
  return { ok: block };
}

/**
 * OpenAI `file_data`: a data URL, though some clients send bare base64. Bare data is taken as a PDF, the one
 * document type every upstream reads.
 */
export function documentFromFileData(fileData: string, filename?: string): DataUrlOutcome<DocumentBlock> {
  let mediaType = 'application/pdf';
  let data = fileData;
  if (fileData.startsWith('data:')) {
    const parsed = parseDataUrl(fileData);
    if (!parsed) return { error: 'must be a base64 data URL (data:<mime>;base64,…)' };
    mediaType = parsed.mediaType || mediaType;
    data = parsed.data;
  }
  const block: DocumentBlock = { type: 'document', source: { kind: 'base64', mediaType, data } };
  if (filename !== undefined) block.filename = filename;
  return { ok: block };
}

/** A neutral image or document as the URL OpenAI dialects carry (data URL for inline data). */
export function urlOfSource(source: ImageBlock['source']): string {
  return source.kind === 'url' ? source.url : toDataUrl(source.mediaType, source.data);
}

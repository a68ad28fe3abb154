import type { ApiError } from './api-error';

/** The spec's shared Error envelope. */
export interface ErrorEnvelope {
  error: string;
  message: string;
  doc_url: string;
  request_id: string;
  param?: string;
  issues?: { path: string; code: string; message: string }[];
  [extra: string]: unknown;
}

export function docUrl(baseUrl: string, code: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/developers#errors-${code}`;
}

export function toEnvelope(error: ApiError, requestId: string, baseUrl: string): ErrorEnvelope {
  const envelope: ErrorEnvelope = {
    ...error.extra,
    error: error.code,
    message: error.callerMessage,
    doc_url: docUrl(baseUrl, error.code),
    request_id: requestId,
  };
  if (error.param !== undefined) envelope.param = error.param;
  if (error.issues !== undefined) envelope.issues = error.issues;
  return envelope;
}

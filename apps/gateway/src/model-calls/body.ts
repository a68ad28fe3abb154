import type { IncomingMessage } from 'node:http';
import { ApiError } from '@sbc/errors';
import { decodeUtf8Body, exceedsJsonDepth, MAX_JSON_DEPTH } from '../http/hostile-input';

function tooLarge(limit: number): ApiError {
  return new ApiError('request_too_large', `The request body is larger than ${limit} bytes.`);
}

/**
 * The edge's one body reader, called only once the credential has been checked: the whole JSON body, or a
 * refusal as soon as it is known to exceed `limit` (from `content-length` before a byte is read, else while
 * it streams in). Nothing more is read after a refusal; the refusal closes the connection (see
 * `closeIfUnread`). `optional` bodies may be empty and then read as undefined. Bytes that are not UTF-8 and
 * nesting past MAX_JSON_DEPTH are 400s with `param: body`.
 */
export function readJsonBody(req: IncomingMessage, limit: number, options: { optional?: boolean } = {}): Promise<{ value: unknown; bytes: number }> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const fail = (error: ApiError) => {
      if (done) return;
      done = true;
      req.removeAllListeners('data');
      reject(error);
    };
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) return fail(tooLarge(limit));
      chunks.push(chunk);
    });
    // A caller that hangs up mid-body is no failure of ours (499, logged as such, not as an error). 'close'
    // also comes after every body read in full; the error (and its stack trace) is built only when it is news.
    const hungUp = () => {
      if (!done) fail(new ApiError('client_closed_request'));
    };
    req.on('error', hungUp);
    req.on('close', hungUp);
    req.on('end', () => {
      if (done) return;
      done = true;
      let text: string;
      try {
        text = decodeUtf8Body(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes));
      } catch (error) {
        reject(error);
        return;
      }
      if (text.trim() === '') {
        if (options.optional) resolve({ value: undefined, bytes });
        else reject(new ApiError('invalid_request', 'The request body must be a JSON object.', { param: 'body' }));
        return;
      }
      if (exceedsJsonDepth(text, MAX_JSON_DEPTH)) {
        reject(new ApiError('invalid_request', `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`, { param: 'body' }));
        return;
      }
      try {
        resolve({ value: JSON.parse(text) as unknown, bytes });
      } catch {
        reject(new ApiError('invalid_request', 'The request body is not valid JSON.', { param: 'body' }));
      }
    });
  });
}

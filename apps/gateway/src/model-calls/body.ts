import type { IncomingMessage } from 'node:http';
import { ApiError } from '@sbc/errors';

function tooLarge(limit: number): ApiError {
  return new ApiError('request_too_large', `The request body is larger than ${limit} bytes.`);
}

/**
 * The edge's one body reader, called only once the credential has been checked: the whole JSON body, or a
 * refusal as soon as it is known to exceed `limit` (from `content-length` before a byte is read, else while
 * it streams in). Nothing more is read after a refusal; the refusal closes the connection (see
 * `closeIfUnread`). `optional` bodies may be empty and then read as undefined.
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
    // A caller that hangs up mid-body is no failure of ours (499, logged as such, not as an error).
    req.on('error', () => fail(new ApiError('client_closed_request')));
    req.on('close', () => fail(new ApiError('client_closed_request')));
    req.on('end', () => {
      if (done) return;
      done = true;
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, bytes).toString('utf8');
      if (text.trim() === '') {
        if (options.optional) resolve({ value: undefined, bytes });
        else reject(new ApiError('invalid_request', 'The request body must be a JSON object.', { param: 'body' }));
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

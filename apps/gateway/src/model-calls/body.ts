import type { IncomingMessage } from 'node:http';
import { ApiError } from '@sbc/errors';

/** Reads the whole JSON body, refusing more than `limit` bytes as soon as it is exceeded. */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<{ value: unknown; bytes: number }> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new ApiError('request_too_large', `The request body is larger than ${limit} bytes.`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new ApiError('request_too_large', `The request body is larger than ${limit} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      if (bytes > limit) return;
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, bytes).toString('utf8');
      if (text.trim() === '') {
        reject(new ApiError('invalid_request', 'The request body must be a JSON object.', { param: 'body' }));
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

import type { IncomingMessage } from 'node:http';
import { ApiError } from '@sbc/errors';
import { decodeUtf8Body, exceedsJsonDepth, MAX_JSON_DEPTH } from '../http/hostile-input';
import { mayHoldUnsafeStrings } from '../http/unsafe-strings';

export interface JsonBody {
  value: unknown;
  bytes: number;
  unsafeEscapes?: true;
}

function tooLarge(limit: number): ApiError {
  return new ApiError('request_too_large', `The request body is larger than ${limit} bytes.`);
}

/**
 * The edge's one body reader, called only once the credential has been checked: the whole JSON body, or a
 * refusal as soon as it is known to exceed `limit` (from `content-length` before a byte is read, else while
 * it streams in). Nothing more is read after a refusal; the refusal closes the connection (see
 * `closeIfUnread`). `optional` bodies may be empty and then read as undefined. Bytes that are not UTF-8 and
 * nesting past MAX_JSON_DEPTH are 400s with `param: body`. `unsafeEscapes` is set when the text has an escape
 * that may spell a NUL or a lone surrogate: only then do callers walk the value for one (findUnsafeString).
 */
export function readJsonBody(
  req: IncomingMessage,
  limit: number,
  options: { optional?: boolean } = {},
): Promise<JsonBody> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    // Once the body is read or refused, the listeners go: a stream's request lives as long as its reply, and
    // they would keep the body's bytes (and the socket read they are a slice of) with it. An IncomingMessage
    // with no error listener emits no error.
    const stop = () => {
      done = true;
      req.off('data', onData);
      req.off('error', hungUp);
      req.off('close', hungUp);
      req.off('end', onEnd);
    };
    const fail = (error: ApiError) => {
      if (done) return;
      stop();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) return fail(tooLarge(limit));
      chunks.push(chunk);
    };
    // A caller that hangs up mid-body is no failure of ours (499, logged as such, not as an error). The error
    // (and its stack trace) is built only when it is news.
    const hungUp = () => {
      if (!done) fail(new ApiError('client_closed_request'));
    };
    const onEnd = () => {
      if (done) return;
      stop();
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
        reject(
          new ApiError(
            'invalid_request',
            `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
            { param: 'body' },
          ),
        );
        return;
      }
      let body: JsonBody;
      try {
        body = { value: JSON.parse(text) as unknown, bytes };
      } catch {
        reject(new ApiError('invalid_request', 'The request body is not valid JSON.', { param: 'body' }));
        return;
      }
      if (mayHoldUnsafeStrings(text)) body.unsafeEscapes = true;
      resolve(body);
    };
    req.on('data', onData);
    req.on('error', hungUp);
    req.on('close', hungUp);
    req.on('end', onEnd);
  });
}

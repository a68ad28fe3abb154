import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { ApiError } from '@sbc/errors';
import type { FilesService, FileInfo } from '@sbc/proto/sbc/runs/v1/files_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { InputLineChecker } from './input-lines';

/** What one append carries: the runs service's chunk size. */
const CHUNK_BYTES = 1024 * 1024;
const PURPOSES = new Set(['batch', 'user_data']);
/** Form fields besides the file are short; anything longer is not one of OpenAI's. */
const FIELD_MAX_BYTES = 1024;
const CHUNK_DEADLINE_MS = 60_000;

function invalid(param: string, message: string): ApiError {
  return ApiError.invalid([{ path: param, code: 'invalid_value', message }]);
}

/**
 * Reads a `multipart/form-data` upload (`file` and `purpose`, in either order) and streams the file into the
 * runs service a chunk per call, checking a `batch` file line by line on the way; commits it when the body is
 * whole and good. Anything that goes wrong on the way discards the upload; nothing half-written is ever listed.
 */
export async function uploadFile(
  req: IncomingMessage,
  files: RpcClientOf<typeof FilesService>,
  ownerId: string,
  requestId: string,
): Promise<FileInfo> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type))
    throw new ApiError('unsupported_media_type', 'Upload a file as multipart/form-data with `file` and `purpose`.');
  let form: busboy.Busboy;
  try {
    form = busboy({ headers: req.headers, limits: { files: 1, fields: 8, fieldSize: FIELD_MAX_BYTES, parts: 9 } });
  } catch {
    throw invalid('file', 'The multipart body has no boundary.');
  }
  let purpose: string | undefined;
  let fileId: string | undefined;
  const checker = new InputLineChecker();
  const rpc = { requestId };
  // A chunk is a megabyte written in one transaction: more than a lookup's deadline on a busy database.
  const chunkRpc = { requestId, deadlineMs: CHUNK_DEADLINE_MS };

  const received = new Promise<void>((resolve, reject) => {
    let pending: Promise<void> = Promise.resolve();
    form.on('field', (name, value) => {
      if (name === 'purpose') purpose = value;
    });
    form.on('file', (name, stream, info) => {
      if (name !== 'file' || fileId !== undefined) {
        stream.resume();
        return;
      }
      pending = storeStream(stream, info.filename).catch((error: unknown) => {
        stream.resume();
        reject(error);
      });
    });
    form.on('partsLimit', () => reject(invalid('file', 'The form has more parts than `file` and `purpose`.')));
    form.on('error', () => reject(invalid('file', 'The multipart body is malformed.')));
    form.on('close', () => pending.then(resolve, reject));
    req.on('aborted', () => reject(new ApiError('client_closed_request')));
    req.pipe(form);
  });

  async function storeStream(stream: NodeJS.ReadableStream, filename: string | undefined): Promise<void> {
    const begun = await files.beginFile({ ownerId, filename: filename || 'file' }, rpc);
    fileId = begun.fileId;
    const maxBytes = Number(begun.maxBytes);
    let seq = 0;
    let total = 0;
    let buffered: Buffer[] = [];
    let bufferedBytes = 0;
    const flush = async () => {
      if (bufferedBytes === 0) return;
      const data = Buffer.concat(buffered);
      buffered = [];
      bufferedBytes = 0;
      for (let at = 0; at < data.length; at += CHUNK_BYTES)
        await files.appendFileChunk(
          { ownerId, fileId, seq: seq++, data: data.subarray(at, at + CHUNK_BYTES) },
          chunkRpc,
        );
    };
    for await (const piece of stream as AsyncIterable<Buffer>) {
      total += piece.length;
      if (total > maxBytes)
        throw new ApiError('request_too_large', `A file may hold at most ${maxBytes} bytes.`, { param: 'file' });
      checker.feed(piece);
      // Once the purpose is known to be `batch`, a bad line ends the upload at once.
      if (checker.bad && purpose === 'batch') throw badLine();
      buffered.push(piece);
      bufferedBytes += piece.length;
      if (bufferedBytes >= CHUNK_BYTES) await flush();
    }
    await flush();
  }

  const badLine = () =>
    invalid('file', `The batch input file is not valid: line ${checker.bad!.line}: ${checker.bad!.message}`);

  try {
    await received;
    if (fileId === undefined) throw invalid('file', 'The form has no `file` part.');
    if (purpose === undefined || !PURPOSES.has(purpose))
      throw invalid('purpose', "purpose must be 'batch' or 'user_data'.");
    if (purpose === 'batch') {
      checker.end();
      if (checker.bad) throw badLine();
    }
    const committed = await files.commitFile({ ownerId, fileId, purpose }, rpc);
    return committed.file!;
  } catch (error) {
    // The rest of the body is read and dropped, so the caller is answered rather than reset mid-send.
    req.unpipe(form);
    req.resume();
    if (fileId !== undefined) await files.abortFile({ ownerId, fileId }, rpc).catch(() => undefined);
    throw error;
  }
}

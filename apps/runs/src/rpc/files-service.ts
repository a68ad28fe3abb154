import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { FileInfoSchema, FilesService } from '@sbc/proto/sbc/runs/v1/files_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import {
  abortFile,
  appendFileChunk,
  beginFile,
  commitFile,
  deleteFile,
  findFile,
  listFiles,
  readFileContent,
  type FileBounds,
  type FileRow,
} from '../store/files';

export interface FilesServiceDeps {
  db: RunsDb;
  bounds: FileBounds;
  now?: () => Date;
}

/** What a caller may upload; `batch_output` is the service's own, for the files batches write. */
const UPLOAD_PURPOSES = new Set(['batch', 'user_data']);
const FILE_ID = /^file-[A-Za-z0-9_-]{1,200}$/;
/** Owners are accounts (`usr_…`) and teams (`org_…`). */
const OWNER_ID = /^(usr|org)_[A-Za-z0-9_-]{1,64}$/;
const MAX_LIST_LIMIT = 10_000;
const MAX_FILENAME_CHARS = 512;

function bad(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
}

function checkedOwner(ownerId: string): string {
  if (!OWNER_ID.test(ownerId)) throw bad('owner_id', 'owner_id must be an account or team id.');
  return ownerId;
}

function checked(request: { ownerId: string; fileId: string }): { ownerId: string; fileId: string } {
  checkedOwner(request.ownerId);
  if (!FILE_ID.test(request.fileId)) throw bad('file_id', 'file_id must be a file- id.');
  return request;
}

function infoOf(row: FileRow): MessageInitShape<typeof FileInfoSchema> {
  return {
    id: row.id,
    bytes: BigInt(row.bytes),
    filename: row.filename,
    purpose: row.purpose,
    createdAt: timestampFromDate(row.createdAt),
    ...(row.expiresAt ? { expiresAt: timestampFromDate(row.expiresAt) } : {}),
  };
}

/** The runs service's files (proto/sbc/runs/v1/files.proto), for the edge. */
export function createFilesService(deps: FilesServiceDeps): RpcImplementation<typeof FilesService> {
  const { db, bounds } = deps;
  const now = deps.now ?? (() => new Date());
  return {
    async beginFile(request) {
      const ownerId = checkedOwner(request.ownerId);
      const filename = request.filename.trim();
      if (filename === '' || filename.length > MAX_FILENAME_CHARS || filename.includes('\u0000'))
        throw bad('file', `The file needs a name of 1 to ${MAX_FILENAME_CHARS} characters.`);
      const fileId = await beginFile(db, { ownerId, filename }, now());
      return { fileId, maxBytes: BigInt(bounds.maxFileBytes) };
    },

    async appendFileChunk(request) {
      const { ownerId, fileId } = checked(request);
      if (request.seq < 0) throw bad('seq', 'seq must be 0 or more.');
      const bytes = await appendFileChunk(db, { ownerId, fileId, seq: request.seq, data: request.data }, bounds);
      return { bytes: BigInt(bytes) };
    },

    async commitFile(request) {
      const { ownerId, fileId } = checked(request);
      if (!UPLOAD_PURPOSES.has(request.purpose)) throw bad('purpose', "purpose must be 'batch' or 'user_data'.");
      return { file: infoOf(await commitFile(db, ownerId, fileId, request.purpose, now())) };
    },

    async abortFile(request) {
      const { ownerId, fileId } = checked(request);
      await abortFile(db, ownerId, fileId);
      return {};
    },

    async getFile(request) {
      const { ownerId, fileId } = checked(request);
      return { file: infoOf(await findFile(db, ownerId, fileId, now())) };
    },

    async listFiles(request) {
      const ownerId = checkedOwner(request.ownerId);
      if (request.limit < 1 || request.limit > MAX_LIST_LIMIT)
        throw bad('limit', `limit must be 1 to ${MAX_LIST_LIMIT}.`);
      const page = await listFiles(db, ownerId, now(), {
        limit: request.limit,
        ascending: request.ascending,
        after: request.after,
        purpose: request.purpose,
      });
      return { files: page.files.map(infoOf), hasMore: page.hasMore };
    },

    async *readFileContent(request) {
      const { ownerId, fileId } = checked(request);
      for await (const data of readFileContent(db, ownerId, fileId, now())) yield { data };
    },

    async deleteFile(request) {
      const { ownerId, fileId } = checked(request);
      await deleteFile(db, ownerId, fileId);
      return { fileId };
    },
  };
}

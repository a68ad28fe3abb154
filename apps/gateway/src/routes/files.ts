import { Router } from 'express';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { fileRoutes as specs } from '@sbc/api';
import { callerDialect } from '@sbc/dialects';
import type { Logger } from '@sbc/logging';
import { listEnvelope } from '@sbc/pagination';
import type { FileInfo, FilesService } from '@sbc/proto/sbc/runs/v1/files_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { uploadFile } from '../batches/upload';
import { refuseInDialect } from '../http/dialect-refusals';
import { refuseHostileUrl } from '../http/hostile-input';
import { mount } from '../http/mount';
import { ownerOf } from '../responses-state/responses-state';

export interface FileRoutesDeps {
  authorize: Authorize;
  /** The runs service's files. */
  files: RpcClientOf<typeof FilesService>;
  baseUrl: string;
  logger: Logger;
}

const OPENAI = callerDialect('chat');
/** A download streams for as long as the caller reads, within this. */
const CONTENT_DEADLINE_MS = 30 * 60_000;

const seconds = (timestamp: Parameters<typeof timestampDate>[0]) =>
  Math.floor(timestampDate(timestamp).getTime() / 1000);

/** A file as OpenAI's File object. */
function fileObject(file: FileInfo) {
  return {
    id: file.id,
    object: 'file',
    bytes: Number(file.bytes),
    created_at: file.createdAt ? seconds(file.createdAt) : 0,
    expires_at: file.expiresAt ? seconds(file.expiresAt) : null,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    status_details: null,
  };
}

/**
 * OpenAI's Files API (libs/api routes/files.ts) over the runs service's store, for the account or, with a team
 * key, its team. Refusals come in OpenAI's error body, so the SDK raises its own typed errors.
 */
export function fileRoutes(deps: FileRoutesDeps): Router {
  const router = Router();
  const { files } = deps;
  router.use('/v1/files', refuseHostileUrl());

  mount(router, specs.createFile, deps.authorize, async ({ req, principal, requestId }) => {
    const file = await uploadFile(req, files, ownerOf(principal), requestId);
    return { status: 200, body: fileObject(file) };
  });

  mount(router, specs.listFiles, deps.authorize, async ({ query, principal, requestId }) => {
    const page = await files.listFiles(
      {
        ownerId: ownerOf(principal),
        limit: query.limit,
        ascending: query.order === 'asc',
        after: query.after,
        purpose: query.purpose,
      },
      { requestId },
    );
    return { status: 200, body: listEnvelope(page.files.map(fileObject), page.hasMore, (file) => file.id) };
  });

  mount(router, specs.getFile, deps.authorize, async ({ params, principal, requestId }) => {
    const found = await files.getFile({ ownerId: ownerOf(principal), fileId: params.file_id }, { requestId });
    return { status: 200, body: fileObject(found.file!) };
  });

  mount(router, specs.getFileContent, deps.authorize, async ({ params, principal, requestId, req, res }) => {
    const ownerId = ownerOf(principal);
    // Looked up first, so an unknown file is a 404 in OpenAI's shape before any byte is sent.
    await files.getFile({ ownerId, fileId: params.file_id }, { requestId });
    const abort = new AbortController();
    req.on('close', () => abort.abort());
    res.status(200).type('application/octet-stream');
    const stream = files.readFileContent(
      { ownerId, fileId: params.file_id },
      { requestId, deadlineMs: CONTENT_DEADLINE_MS, signal: abort.signal },
    );
    for await (const chunk of stream) {
      if (!res.write(chunk.data))
        await new Promise((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
    res.end();
  });

  mount(router, specs.deleteFile, deps.authorize, async ({ params, principal, requestId }) => {
    await files.deleteFile({ ownerId: ownerOf(principal), fileId: params.file_id }, { requestId });
    return { status: 200, body: { id: params.file_id, object: 'file', deleted: true } };
  });

  router.use(refuseInDialect(OPENAI, deps));
  return router;
}

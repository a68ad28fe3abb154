import { z } from 'zod';
import { defineRoute, type RouteAuth, type RouteSpec } from '../route';
import { DialectError } from './gateway';

// Files in OpenAI's shapes and error body (docs/batches.md): the official SDK's `files.create`, `files.list`,
// `files.retrieve`, `files.content` and `files.delete` call these. A batch's lines are model calls made with the
// key that created it, and at OpenAI one key kind uploads files and calls models, so these take
// `gateway:invoke`, as a model call does.

const TAG = 'Files';
const AUTH: RouteAuth = { kind: 'scoped', scopes: ['gateway:invoke'] };

/** The largest page of files one list answers, as at OpenAI. */
export const MAX_FILE_PAGE = 10_000;

export const FileId = z
  .string()
  .regex(/^file-[A-Za-z0-9_-]{1,200}$/, 'Expected the id of a file (file-…).')
  .meta({ description: '`file-…`, as an upload returned it.' });

export const FileObject = z
  .object({
    id: z.string(),
    object: z.literal('file'),
    bytes: z.number().int(),
    created_at: z.number().int().meta({ description: 'Unix seconds.' }),
    expires_at: z.number().int().nullable().optional(),
    filename: z.string(),
    purpose: z.enum(['batch', 'user_data', 'batch_output']),
    status: z.literal('processed').meta({ description: 'Always `processed`: a file is listed once it is whole.' }),
  })
  .loose()
  .meta({ id: 'FileObject' });

export const createFile = defineRoute({
  operationId: 'createFile',
  method: 'post',
  path: '/v1/files',
  summary: 'Upload a file',
  description:
    'A `multipart/form-data` body with a `purpose` field (`batch` or `user_data`) and a `file` part. A `batch` ' +
    'file is checked line by line as it arrives: every line a JSON object with a unique `custom_id`, `method` ' +
    '`POST`, a `url` of `/v1/chat/completions`, `/v1/responses` or `/v1/embeddings`, and an object `body`; the ' +
    'first bad line is a 400 naming it. Past the per-file limit 413, past the account quota 400 (`param` `file`).',
  tag: TAG,
  auth: AUTH,
  responses: { 200: { description: 'The file, whole and readable.', schema: FileObject } },
  errors: [413, 415],
  errorBody: DialectError,
  rateCost: 5,
});

export const listFiles = defineRoute({
  operationId: 'listFiles',
  method: 'get',
  path: '/v1/files',
  summary: 'List files',
  description: "The account's files (a team key: its team's), newest first unless `order=asc`.",
  tag: TAG,
  auth: AUTH,
  query: z.object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_FILE_PAGE)
      .default(MAX_FILE_PAGE)
      .meta({ description: `1 to ${MAX_FILE_PAGE}, default ${MAX_FILE_PAGE}.` }),
    order: z.enum(['asc', 'desc']).default('desc'),
    after: FileId.optional().meta({ description: 'A file id: the page starts after it.' }),
    purpose: z.enum(['batch', 'user_data', 'batch_output']).optional(),
  }),
  responses: {
    200: {
      description: 'A page of files.',
      schema: z
        .object({
          object: z.literal('list'),
          data: z.array(FileObject),
          has_more: z.boolean(),
          first_id: z.string().nullable(),
          last_id: z.string().nullable(),
        })
        .loose()
        .meta({ id: 'FileList' }),
    },
  },
  errorBody: DialectError,
});

export const getFile = defineRoute({
  operationId: 'getFile',
  method: 'get',
  path: '/v1/files/{file_id}',
  summary: 'Get a file',
  description: "Another account's file is 404, as an unknown one.",
  tag: TAG,
  auth: AUTH,
  params: z.object({ file_id: FileId }),
  responses: { 200: { description: 'The file.', schema: FileObject } },
  errors: [404],
  errorBody: DialectError,
});

export const getFileContent = defineRoute({
  operationId: 'getFileContent',
  method: 'get',
  path: '/v1/files/{file_id}/content',
  summary: "Download a file's content",
  description: 'The bytes as uploaded (or as a batch wrote them), streamed.',
  tag: TAG,
  auth: AUTH,
  params: z.object({ file_id: FileId }),
  responses: {
    200: { description: 'The file’s bytes.', schema: z.string(), contentType: 'application/octet-stream' },
  },
  errors: [404],
  errorBody: DialectError,
});

export const deleteFile = defineRoute({
  operationId: 'deleteFile',
  method: 'delete',
  path: '/v1/files/{file_id}',
  summary: 'Delete a file',
  description: 'Gone at once; its bytes no longer count against the quota.',
  tag: TAG,
  auth: AUTH,
  params: z.object({ file_id: FileId }),
  responses: {
    200: {
      description: "OpenAI's deletion object.",
      schema: z
        .object({ id: z.string(), object: z.literal('file'), deleted: z.literal(true) })
        .loose()
        .meta({ id: 'FileDeleted' }),
    },
  },
  errors: [404],
  errorBody: DialectError,
});

export const FILE_ROUTES: RouteSpec[] = [createFile, listFiles, getFile, getFileContent, deleteFile];

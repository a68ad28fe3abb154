import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@sbc/pagination';
import { defineRoute, type RouteAuth, type RouteSpec } from '../route';
import { DialectError, ResponseObject } from './gateway';

// Stored OpenAI Responses (CONTRACTS "Agents, tools and policies"), in OpenAI's own shapes and error body: the
// official SDK's `responses.retrieve`, `responses.inputItems.list` and `responses.delete` call these. One key kind
// creates and reads responses at OpenAI, so these take `gateway:invoke`, as creating one does.

const TAG = 'Gateway';
const AUTH: RouteAuth = { kind: 'scoped', scopes: ['gateway:invoke'] };

const ResponseId = z
  .string()
  .regex(/^resp_[A-Za-z0-9_-]{1,200}$/, 'Expected the id of a response (resp_…).')
  .meta({ description: '`resp_…`, as a create returned it.' });

/** OpenAI's `include` on these routes: every stored item already carries what it would add. */
const Include = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .meta({ description: 'Accepted for OpenAI clients; stored items already carry what it adds (encrypted reasoning).' });

const ResponseItem = z
  .object({ id: z.string(), type: z.string() })
  .loose()
  .meta({ id: 'ResponseItem', description: 'An item of a response context, in OpenAI Responses input item shapes.' });

const ResponseItemList = z
  .object({
    object: z.literal('list'),
    data: z.array(ResponseItem),
    has_more: z.boolean(),
    first_id: z.string().nullable(),
    last_id: z.string().nullable().meta({ description: 'Pass as `after` for the next page.' }),
  })
  .loose()
  .meta({ id: 'ResponseItemList' });

export const getResponse = defineRoute({
  operationId: 'getResponse',
  method: 'get',
  path: '/v1/responses/{response_id}',
  summary: 'Get a stored response',
  description:
    'The Response object as its create returned it (the final object of a stream). Kept 30 days for the account ' +
    "(a team key: its team's responses alone); another account's id is 404, as an unknown one.",
  tag: TAG,
  auth: AUTH,
  params: z.object({ response_id: ResponseId }),
  query: z.object({
    include: Include,
    stream: z
      .enum(['true', 'false'])
      .optional()
      .refine((value) => value !== 'true', 'Only background responses stream from here, and none are made.')
      .meta({ description: 'Only `false`: there are no background responses to stream.' }),
  }),
  responses: { 200: { description: 'The stored response.', schema: ResponseObject } },
  errors: [404],
  errorBody: DialectError,
});

export const listResponseInputItems = defineRoute({
  operationId: 'listResponseInputItems',
  method: 'get',
  path: '/v1/responses/{response_id}/input_items',
  summary: "List a stored response's input items",
  description:
    'Its whole context, as at OpenAI: the items of the response it continued (that one’s input items, then its ' +
    'output), then the input it was created with. Newest first unless `order=asc`; `after` pages by item id.',
  tag: TAG,
  auth: AUTH,
  params: z.object({ response_id: ResponseId }),
  query: z.object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_LIMIT)
      .default(DEFAULT_PAGE_LIMIT)
      .meta({ description: `1 to ${MAX_PAGE_LIMIT}, default ${DEFAULT_PAGE_LIMIT}.` }),
    order: z.enum(['asc', 'desc']).default('desc'),
    after: z.string().min(1).max(256).optional().meta({ description: 'An item id: the page starts after it.' }),
    include: Include,
  }),
  responses: { 200: { description: 'A page of input items.', schema: ResponseItemList } },
  errors: [404],
  errorBody: DialectError,
});

export const deleteResponse = defineRoute({
  operationId: 'deleteResponse',
  method: 'delete',
  path: '/v1/responses/{response_id}',
  summary: 'Delete a stored response',
  description: 'Gone at once for every read and for `previous_response_id`.',
  tag: TAG,
  auth: AUTH,
  params: z.object({ response_id: ResponseId }),
  responses: {
    200: {
      description: "OpenAI's deletion object.",
      schema: z
        .object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) })
        .loose()
        .meta({ id: 'ResponseDeleted' }),
    },
  },
  errors: [404],
  errorBody: DialectError,
});

export const RESPONSE_ROUTES: RouteSpec[] = [getResponse, listResponseInputItems, deleteResponse];

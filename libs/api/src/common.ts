import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@sbc/pagination';
import { SCOPES } from '@sbc/scopes';

/** The spec's shared Error envelope; CONTRACTS adds `issues` (400) and `required_scopes` (403). */
export const ErrorEnvelope = z
  .object({
    error: z.string().meta({ description: 'Stable machine code.' }),
    message: z.string(),
    doc_url: z.url(),
    request_id: z.string().meta({ description: 'Echoed in the x-request-id response header.' }),
    param: z.string().optional().meta({ description: 'The request field the error is about.' }),
    issues: z
      .array(z.object({ path: z.string(), code: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'Every problem of a 400, paths in dotted form.' }),
    required_scopes: z
      .array(z.string())
      .optional()
      .meta({ description: 'The scopes the route needs (403 insufficient_scope).' }),
  })
  .loose()
  .meta({ id: 'Error' });

export const Scope = z.enum(SCOPES).meta({ id: 'Scope' });

export const DateTime = z.iso.datetime({ offset: true });

const PAGE_QUERY_SHAPE = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_LIMIT)
    .default(DEFAULT_PAGE_LIMIT)
    .meta({ description: `1 to ${MAX_PAGE_LIMIT}, default ${DEFAULT_PAGE_LIMIT}.` }),
  after_id: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The next page: items after this id (pass the last_id of a page).' }),
  before_id: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The previous page: items before this id (pass the first_id of a page).' }),
};

/** `limit`, `after_id`, `before_id` (CONTRACTS "Lists") plus a list's own filters; both cursors at once is refused. */
export function pageQuery<Extra extends z.ZodRawShape = Record<never, never>>(extra?: Extra) {
  return z
    .object({ ...PAGE_QUERY_SHAPE, ...(extra ?? ({} as Extra)) })
    .refine(
      (query) =>
        (query as { after_id?: string }).after_id === undefined ||
        (query as { before_id?: string }).before_id === undefined,
      {
        message: 'Pass after_id or before_id, not both.',
        path: ['before_id'],
      },
    );
}

export const PageQuery = pageQuery();

/** The list envelope of every account list, newest first. */
export function listOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      object: z.literal('list'),
      data: z.array(item),
      has_more: z.boolean(),
      first_id: z.string().nullable().meta({ description: 'Pass as before_id for the previous page.' }),
      last_id: z.string().nullable().meta({ description: 'Pass as after_id for the next page.' }),
    })
    .loose()
    .meta({ id });
}

/** An empty 204 answer. */
export const NO_CONTENT = { description: 'Done; no body.' } as const;

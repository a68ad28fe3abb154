import { fillPath, type InputOf, type ResultOf, type Route, type RouteShape } from './route';

/**
 * The console's only way to the edge: same-origin fetches that carry the HttpOnly session cookie (the page
 * never holds a token). Refusals arrive in the shared Error envelope and are thrown as ApiFailure.
 */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    /** Every problem of a refused input, where the edge lists them (`path` is dotted: `requests.2.custom_id`). */
    readonly issues: { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

type Query = Record<string, unknown>;

/** `path?query`, leaving out empty values. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The listed problems of a refusal that has them, each with its dotted path; none otherwise. */
function issuesOf(listed: unknown): { path: string; message: string }[] {
  if (!Array.isArray(listed)) return [];
  return listed.flatMap((issue: unknown) => {
    const { path, message } = (issue ?? {}) as { path?: unknown; message?: unknown };
    return typeof path === 'string' && typeof message === 'string' ? [{ path, message }] : [];
  });
}

/**
 * An error body's refusal: the shared envelope, or a model dialect's body (OpenAI's for files and batches, whose
 * `code` may be null; Anthropic's for message batches, which has a `type` and no code).
 */
export function failureFrom(status: number, statusText: string, body: unknown): ApiFailure {
  const { error, message, param, issues } = (body ?? {}) as {
    error?: unknown;
    message?: string;
    param?: string;
    issues?: unknown;
  };
  if (error && typeof error === 'object') {
    const dialect = error as {
      message?: string;
      type?: string;
      code?: string | null;
      param?: string | null;
      issues?: unknown;
    };
    return new ApiFailure(
      status,
      dialect.code ?? dialect.type ?? 'error',
      dialect.message ?? statusText,
      dialect.param ?? undefined,
      issuesOf(dialect.issues),
    );
  }
  return new ApiFailure(
    status,
    typeof error === 'string' ? error : 'error',
    message ?? statusText,
    param,
    issuesOf(issues),
  );
}

async function failureOf(response: Response): Promise<ApiFailure> {
  try {
    return failureFrom(response.status, response.statusText, await response.json());
  } catch {
    return new ApiFailure(response.status, 'error', `The service answered ${response.status}.`);
  }
}

/**
 * Calls one route: its path filled from `params`, `query` appended, `body` sent as JSON; answers with the
 * route's success body, typed by its spec. The one place the console's reads and writes go through.
 */
export async function call<R extends RouteShape>(route: Route<R>, input: InputOf<R>): Promise<ResultOf<R>> {
  const { params, query, body } = input as { params?: Record<string, unknown>; query?: Query; body?: unknown };
  const response = await fetch(withQuery(fillPath(route.path, params), query), {
    method: route.method.toUpperCase(),
    credentials: 'same-origin',
    headers:
      body === undefined
        ? { accept: 'application/json' }
        : { accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failureOf(response);
  // The body's shape is the spec's: the edge renders every answer from the same schema.
  return (response.status === 204 ? undefined : await response.json()) as ResultOf<R>;
}

/**
 * Sends `form` as `multipart/form-data` to a route whose body is not JSON (a file upload); answers with the
 * route's success body. The browser writes the content type with the form's boundary.
 */
export async function upload<R extends RouteShape>(route: Route<R>, form: FormData): Promise<ResultOf<R>> {
  const response = await fetch(route.path, {
    method: route.method.toUpperCase(),
    credentials: 'same-origin',
    headers: { accept: 'application/json' },
    body: form,
  });
  if (!response.ok) throw await failureOf(response);
  return (await response.json()) as ResultOf<R>;
}

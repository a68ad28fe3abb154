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
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

type Query = Record<string, string | number | undefined>;

/** `path?query`, leaving out empty values. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function failureOf(response: Response): Promise<ApiFailure> {
  try {
    const body = (await response.json()) as { error?: string; message?: string; param?: string };
    return new ApiFailure(response.status, body.error ?? 'error', body.message ?? response.statusText, body.param);
  } catch {
    return new ApiFailure(response.status, 'error', `The service answered ${response.status}.`);
  }
}

export async function request<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers:
      body === undefined
        ? { accept: 'application/json' }
        : { accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failureOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export const get = <T>(path: string, query?: Query) => request<T>('GET', withQuery(path, query));

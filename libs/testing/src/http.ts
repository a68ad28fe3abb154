/**
 * The parsed JSON body of a response, loosely typed so tests can assert on fields directly. (fetch's own
 * `json()` is typed `unknown` under Node's types.)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function jsonOf(res: Response): Promise<any> {
  return res.json();
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * A JSON client for the service's REST surface in tests. With a checker, every answer is checked against
 * /docs/openapi.json (see createContractChecker), so a test cannot pass on a body the document does not describe.
 */
export function createApiClient(
  baseUrl: string,
  checker?: { check(method: string, url: string, status: number, body: unknown, contentType?: string): void },
) {
  return async function call(
    method: string,
    path: string,
    options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiAnswer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    const body = text === '' ? undefined : contentType.includes('json') ? JSON.parse(text) : text;
    checker?.check(method, path, res.status, body, contentType || undefined);
    return { status: res.status, headers: res.headers, body };
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;

import type { CostSourceConfig } from '../config';

/** One day of one provider's measured cost, by service line. */
export interface DailyCost {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  service: string;
  usd: number;
}

/** Reads a provider's organization cost report for [from, to) in daily buckets, every page of it. */
export type CostReportReader = (range: { from: Date; to: Date }, signal?: AbortSignal) => Promise<DailyCost[]>;

export class CostReportError extends Error {
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(`${provider} cost report: ${message}`);
    this.name = 'CostReportError';
  }
}

/** At most this many pages per read, so a report that keeps answering `has_more` cannot hold a request forever. */
const MAX_PAGES = 20;
const REQUEST_TIMEOUT_MS = 15_000;

const endpoint = (baseUrl: string, path: string) => `${baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}${path}`;

async function getJson(
  provider: string,
  url: URL,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (error) {
    throw new CostReportError(provider, `unreachable (${error instanceof Error ? error.message : String(error)})`);
  }
  // The body of a refusal may echo the request; only the status is kept, so no credential reaches a log.
  if (!response.ok) throw new CostReportError(provider, `answered ${response.status}`);
  try {
    return await response.json();
  } catch {
    throw new CostReportError(provider, 'answered with a body that is not JSON');
  }
}

interface Page<T> {
  data?: T[];
  has_more?: boolean;
  next_page?: string | null;
}

function page<T>(provider: string, body: unknown): Page<T> {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as Page<T>).data)) {
    throw new CostReportError(provider, 'answered without a `data` array');
  }
  return body as Page<T>;
}

const dayOfUnix = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/**
 * OpenAI: `GET /v1/organization/costs` with an admin key (Bearer), daily buckets (`start_time` / `end_time` in
 * unix seconds), grouped by line item; `amount.value` is USD.
 */
export function openAiCostReport(config: CostSourceConfig): CostReportReader {
  return async ({ from, to }, signal) => {
    const costs: DailyCost[] = [];
    let next: string | null | undefined;
    for (let n = 0; n < MAX_PAGES; n++) {
      const url = new URL(endpoint(config.baseUrl, '/v1/organization/costs'));
      url.searchParams.set('start_time', String(Math.floor(from.getTime() / 1000)));
      url.searchParams.set('end_time', String(Math.ceil(to.getTime() / 1000)));
      url.searchParams.set('bucket_width', '1d');
      url.searchParams.append('group_by', 'line_item');
      url.searchParams.set('limit', '180');
      if (next) url.searchParams.set('page', next);
      type Bucket = {
        start_time: number;
        results?: Array<{ amount?: { value?: number | string }; line_item?: string | null }>;
      };
      const body = page<Bucket>(
        'openai',
        await getJson('openai', url, { authorization: `Bearer ${config.adminKey}` }, signal),
      );
      for (const bucket of body.data ?? []) {
        for (const result of bucket.results ?? []) {
          const usd = Number(result.amount?.value ?? 0);
          if (Number.isFinite(usd))
            costs.push({ day: dayOfUnix(bucket.start_time), service: result.line_item ?? 'other', usd });
        }
      }
      next = body.next_page;
      if (!body.has_more || !next) return costs;
    }
    throw new CostReportError('openai', `more than ${MAX_PAGES} pages`);
  };
}

/**
 * Anthropic: `GET /v1/organizations/cost_report` with an admin key (`x-api-key`, `anthropic-version`), daily
 * buckets (`starting_at` / `ending_at`, RFC 3339), grouped by description; `amount` is a decimal string in
 * cents.
 */
export function anthropicCostReport(config: CostSourceConfig): CostReportReader {
  return async ({ from, to }, signal) => {
    const costs: DailyCost[] = [];
    let next: string | null | undefined;
    for (let n = 0; n < MAX_PAGES; n++) {
      const url = new URL(endpoint(config.baseUrl, '/v1/organizations/cost_report'));
      url.searchParams.set('starting_at', from.toISOString());
      url.searchParams.set('ending_at', to.toISOString());
      url.searchParams.set('bucket_width', '1d');
      url.searchParams.append('group_by[]', 'description');
      url.searchParams.set('limit', '31');
      if (next) url.searchParams.set('page', next);
      type Bucket = {
        starting_at: string;
        results?: Array<{ amount?: string | number; currency?: string; description?: string | null }>;
      };
      const headers = { 'x-api-key': config.adminKey, 'anthropic-version': '2023-06-01' };
      const body = page<Bucket>('anthropic', await getJson('anthropic', url, headers, signal));
      for (const bucket of body.data ?? []) {
        for (const result of bucket.results ?? []) {
          const cents = Number(result.amount ?? 0);
          if (Number.isFinite(cents))
            costs.push({
              day: bucket.starting_at.slice(0, 10),
              service: result.description ?? 'other',
              usd: cents / 100,
            });
        }
      }
      next = body.next_page;
      if (!body.has_more || !next) return costs;
    }
    throw new CostReportError('anthropic', `more than ${MAX_PAGES} pages`);
  };
}

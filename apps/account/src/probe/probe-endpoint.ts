import { Agent, errors as undiciErrors } from 'undici';
import type { UpstreamDialect } from '@sbc/dialects';
import type { EgressCaller, EgressPolicy } from '@sbc/egress';
import { decideByCalls, decideByShape, listShape, type ListShape } from './decide-dialect';
import { endpointUrl } from './endpoint-url';
import type { EndpointDialect } from '../store/upstreams';

/** What a probe dials: an endpoint's dial with its secrets opened. */
export interface ProbeTarget {
  baseUrl: string;
  dialect: EndpointDialect;
  /** '' when the endpoint needs none. */
  apiKey: string;
  headers: Record<string, string>;
  /** Whom the dial is for (the endpoint's owner), which decides whether loopback and private addresses are allowed. */
  dialAs: EgressCaller;
}

/** What a probe found: the models listed (with Anthropic's display names) and who answered, or why not. */
export interface ProbeReport {
  ok: boolean;
  /** The dialect that answered. */
  dialect?: UpstreamDialect;
  /** Why an `auto` endpoint was taken to speak `dialect`, in words. */
  dialectReason?: string;
  models: string[];
  modelNames: Record<string, string>;
  /** A readable reason when not ok. */
  error?: string;
  at: Date;
}

export interface ProberOptions {
  /** Connect plus the whole answer, per dialect tried. */
  timeoutMs: number;
  /** Checks every address dialed, as resolved (CONTRACTS Egress). */
  egress: EgressPolicy;
}

export interface Prober {
  probe(target: ProbeTarget, signal?: AbortSignal): Promise<ProbeReport>;
}

const ANTHROPIC_VERSION = '2023-06-01';
// A model list is small; anything far bigger is not one, and is not read into memory.
const MAX_BODY_BYTES = 4 * 1024 * 1024;
// Anthropic pages its list (1,000 per page at most); a few pages is more than any real endpoint lists.
const MAX_ANTHROPIC_PAGES = 5;

type Attempt =
  { ok: true; models: string[]; modelNames: Record<string, string>; shape: ListShape } | { ok: false; error: string };

/** The dialect to prefer when an `auto` endpoint answers both: Anthropic for a host that names it, else OpenAI. */
export function preferredDialects(baseUrl: string): [UpstreamDialect, UpstreamDialect] {
  return new URL(baseUrl).hostname.includes('anthropic') ? ['anthropic', 'openai'] : ['openai', 'anthropic'];
}

/** Each dialect's credential headers; the endpoint's own headers go on top, as the edge sends them. */
function probeHeaders(dialect: UpstreamDialect, target: ProbeTarget): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (dialect === 'anthropic') {
    headers['anthropic-version'] = ANTHROPIC_VERSION;
    if (target.apiKey) headers['x-api-key'] = target.apiKey;
  } else if (target.apiKey) {
    headers.authorization = `Bearer ${target.apiKey}`;
  }
  return Object.assign(headers, target.headers);
}

/**
 * Reads a model list in either dialect's shape (`{data: [{id, display_name?}]}`); undefined when the body is
 * not one. Anthropic's paging fields come back for the caller to follow.
 */
export function parseModelList(
  body: unknown,
): { ids: string[]; names: Record<string, string>; hasMore: boolean; lastId?: string; shape: ListShape } | undefined {
  if (!body || typeof body !== 'object' || !Array.isArray((body as { data?: unknown }).data)) return undefined;
  const list = body as { data: unknown[]; has_more?: unknown; last_id?: unknown };
  const ids: string[] = [];
  const names: Record<string, string> = {};
  for (const item of list.data) {
    const { id, display_name: name } = (item ?? {}) as { id?: unknown; display_name?: unknown };
    if (typeof id !== 'string' || id === '') return undefined;
    ids.push(id);
    if (typeof name === 'string' && name !== '' && name !== id) names[id] = name;
  }
  return {
    ids,
    names,
    hasMore: list.has_more === true,
    lastId: typeof list.last_id === 'string' ? list.last_id : ids.at(-1),
    shape: listShape(list.data),
  };
}

/** A transport failure in words a person can act on. */
export function describeTransportError(error: unknown, where: string, timeoutMs: number): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused by ${where}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where}: host not found`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `${where} closed the connection`;
    case 'EGRESS_DENIED':
      return message;
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return `${where} did not answer within ${timeoutMs / 1000} s`;
    default:
      if (typeof code === 'string' && /CERT|SSL|TLS/.test(code)) return `TLS failed with ${where}: ${message}`;
      return `${where}: ${message}`;
  }
}

/** The reply's content type without parameters, for reports: what came back is named, never copied. */
function contentTypeOf(headers: Record<string, string | string[] | undefined>): string {
  const value = headers['content-type'];
  const type = (Array.isArray(value) ? value[0] : value)?.split(';')[0]?.trim().toLowerCase();
  return type || 'no content type';
}

/**
 * An error message from a JSON error body, bounded. Any other body is never copied into a report: an endpoint
 * aimed at an internal page would otherwise read that page back to whoever saved it.
 */
function upstreamMessage(text: string, contentType: string): string {
  if (!/[/+]json$/.test(contentType)) return '';
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = body.error as { message?: unknown } | string | undefined;
    const message =
      typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : body.message;
    if (typeof message === 'string') return message.slice(0, 200);
  } catch {
    // Not JSON after all: the status and content type say enough.
  }
  return '';
}

/** The body as text; undefined past MAX_BODY_BYTES. */
async function readBody(body: AsyncIterable<Buffer>): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One page of the model list in one dialect; a non-list answer throws ProbeFailure with what came back. */
async function listOnce(
  agent: Agent,
  dialect: UpstreamDialect,
  target: ProbeTarget,
  signal: AbortSignal,
  afterId?: string,
) {
  const { origin, path } = endpointUrl(target.baseUrl, '/models');
  const url = new URL(path, origin);
  if (dialect === 'anthropic') {
    url.searchParams.set('limit', '1000');
    if (afterId) url.searchParams.set('after_id', afterId);
  }
  const where = `${url.host}${url.pathname}`;
  const reply = await agent.request({
    origin,
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers: probeHeaders(dialect, target),
    signal,
  });
  const text = await readBody(reply.body);
  const contentType = contentTypeOf(reply.headers);
  if (reply.statusCode < 200 || reply.statusCode > 299) {
    const detail = text ? upstreamMessage(text, contentType) : '';
    throw new ProbeFailure(`${where} answered HTTP ${reply.statusCode}${detail ? `: ${detail}` : ` (${contentType})`}`);
  }
  let parsed: ReturnType<typeof parseModelList>;
  try {
    parsed = text === undefined ? undefined : parseModelList(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed)
    throw new ProbeFailure(`${where} did not answer with a model list (HTTP ${reply.statusCode}, ${contentType})`);
  return parsed;
}

/**
 * Dials endpoints' model lists (`GET {base}/v1/models`) in their dialect: OpenAI with a Bearer key, Anthropic
 * with `x-api-key` and `anthropic-version`. `auto` asks in both dialects at once and takes what answered;
 * when both do, the lists' shape decides, and failing that a one-token call in each (`decideAuto`). Nothing here throws
 * for the endpoint's sake: every failure is a report with a reason. Redirects are not followed (a redirect could lead
 * past the egress check).
 */
export function createProber(options: ProberOptions): Prober {
  async function attempt(
    agent: Agent,
    dialect: UpstreamDialect,
    target: ProbeTarget,
    signal: AbortSignal,
    timedOut: AbortSignal,
  ): Promise<Attempt> {
    const models: string[] = [];
    const modelNames: Record<string, string> = {};
    let afterId: string | undefined;
    let shape: ListShape = 'unknown';
    try {
      for (let page = 0; page < MAX_ANTHROPIC_PAGES; page++) {
        const list = await listOnce(agent, dialect, target, signal, afterId);
        if (page === 0) shape = list.shape;
        for (const id of list.ids) if (!models.includes(id)) models.push(id);
        Object.assign(modelNames, list.names);
        if (dialect !== 'anthropic' || !list.hasMore || !list.lastId) break;
        afterId = list.lastId;
      }
      return { ok: true, models, modelNames, shape };
    } catch (error) {
      if (error instanceof ProbeFailure) return { ok: false, error: error.message };
      const where = new URL(target.baseUrl).host;
      if (signal.aborted && isAbort(error)) {
        return {
          ok: false,
          error: timedOut.aborted
            ? `${where} did not answer within ${options.timeoutMs / 1000} s`
            : 'the probe was cancelled',
        };
      }
      return { ok: false, error: describeTransportError(error, where, options.timeoutMs) };
    }
  }

  return {
    async probe(target, callerSignal) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
      const dialects = target.dialect === 'auto' ? preferredDialects(target.baseUrl) : [target.dialect];
      // Probes are rare (a person saved or re-checked an endpoint), so each gets its own pool, closed after.
      const agent = new Agent({
        connect: options.egress.connector(target.dialAs, { timeout: options.timeoutMs }),
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
      try {
        const attempts = await Promise.all(dialects.map((dialect) => attempt(agent, dialect, target, signal, timeout)));
        if (attempts.some((result) => result.ok)) {
          if (target.dialect !== 'auto')
            return answeredReport(target.dialect, attempts[0] as Extract<Attempt, { ok: true }>);
          return await decideAuto(agent, target, dialects, attempts, signal);
        }
        return failedReport(dialects, attempts);
      } finally {
        await agent.destroy();
      }
    },
  };
}

function answeredReport(
  dialect: UpstreamDialect,
  found: Extract<Attempt, { ok: true }>,
  dialectReason?: string,
): ProbeReport {
  const report: ProbeReport = { ok: true, dialect, models: found.models, modelNames: found.modelNames, at: new Date() };
  if (dialectReason !== undefined) report.dialectReason = dialectReason;
  return report;
}

/**
 * An `auto` endpoint of which at least one probe answered: decided by the lists' shapes, or, when those do
 * not say, by which dialect answers a one-token call for the first model listed (decide-dialect.ts).
 */
async function decideAuto(
  agent: Agent,
  target: ProbeTarget,
  dialects: UpstreamDialect[],
  attempts: Attempt[],
  signal: AbortSignal,
): Promise<ProbeReport> {
  const byDialect = Object.fromEntries(dialects.map((dialect, i) => [dialect, attempts[i]!])) as Record<
    UpstreamDialect,
    Attempt
  >;
  const preferred = dialects[0]!;
  const decision = decideByShape({ openai: byDialect.openai, anthropic: byDialect.anthropic }, preferred);
  if (!('ask' in decision))
    return answeredReport(
      decision.dialect,
      byDialect[decision.dialect] as Extract<Attempt, { ok: true }>,
      decision.reason,
    );
  const listed = byDialect[preferred] as Extract<Attempt, { ok: true }>;
  const model = listed.models[0];
  if (model === undefined)
    return answeredReport(
      preferred,
      listed,
      `${decision.reason}; no model is listed to try a call with, so ${preferred} is preferred for this host`,
    );
  const [openai, anthropic] = await Promise.all([
    answersCall(agent, 'openai', target, model, signal),
    answersCall(agent, 'anthropic', target, model, signal),
  ]);
  const decided = decideByCalls({ openai, anthropic }, preferred, decision.reason);
  return answeredReport(decided.dialect, byDialect[decided.dialect] as Extract<Attempt, { ok: true }>, decided.reason);
}

/** Whether the endpoint answers a one-token call in `dialect` with a reply in that dialect's shape. */
async function answersCall(
  agent: Agent,
  dialect: UpstreamDialect,
  target: ProbeTarget,
  model: string,
  signal: AbortSignal,
): Promise<boolean> {
  const { origin, path } = endpointUrl(target.baseUrl, dialect === 'openai' ? '/chat/completions' : '/messages');
  const messages = [{ role: 'user', content: 'hi' }];
  const body = JSON.stringify({ model, max_tokens: 1, messages });
  try {
    const headers = { ...probeHeaders(dialect, target), 'content-type': 'application/json' };
    const reply = await agent.request({ origin, path, method: 'POST', headers, body, signal });
    const text = await readBody(reply.body);
    if (reply.statusCode < 200 || reply.statusCode > 299 || text === undefined) return false;
    const parsed = JSON.parse(text) as { choices?: unknown; type?: unknown };
    return dialect === 'openai' ? Array.isArray(parsed.choices) : parsed.type === 'message';
  } catch {
    return false;
  }
}

/** No dialect answered: one reason, or each dialect's when they differ. */
function failedReport(dialects: UpstreamDialect[], attempts: Attempt[]): ProbeReport {
  const reasons = [...new Set(attempts.map((result) => (result.ok ? '' : result.error)))];
  const error =
    reasons.length === 1
      ? reasons[0]
      : dialects.map((dialect, i) => `${dialect}: ${(attempts[i] as { error: string }).error}`).join('; ');
  return { ok: false, models: [], modelNames: {}, error, at: new Date() };
}

/** A probe answered, but not with a model list; its message is the report's reason. */
class ProbeFailure extends Error {}

function isAbort(error: unknown): boolean {
  return (
    error instanceof undiciErrors.RequestAbortedError ||
    (error as { name?: unknown } | null)?.name === 'AbortError' ||
    (error as { name?: unknown } | null)?.name === 'TimeoutError'
  );
}

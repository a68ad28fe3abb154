import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PubSub } from '@sbc/cache';
import { XBUILDS_APP_CHANGED_CHANNEL } from '@sbc/events';
import type { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import type { RpcClientOf } from '@sbc/rpc';

export interface AppsHostDeps {
  /** Published apps are served for `Host: <slug>.<appsDomain>`. */
  appsDomain: string;
  xbuilds: RpcClientOf<typeof XBuildsService>;
  /** Carries the builds service's "app changed" notices (a take-down), so every edge forgets the slug at once. */
  pubsub?: PubSub;
  /** How long a served file is kept; a lost notice is bounded by it. Default 60 s. */
  cacheMs?: number;
  /** Most slugs kept in memory. Default 1,000. */
  maxSlugs?: number;
}

export interface AppsHost {
  /** True when the request is for the apps host (and has been answered); false leaves it to the API. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

type Answer =
  { state: 'live'; contentType: string; body: Buffer; csp: string } | { state: 'taken_down' } | { state: 'missing' };

interface CachedSlug {
  until: number;
  files: Map<string, Answer>;
}

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DEFAULT_CACHE_MS = 60_000;
const DEFAULT_MAX_SLUGS = 1_000;
const MAX_PATH = 512;

/** Headers every apps-host answer carries: nothing sniffed, no referrer, no framing, no powerful features. */
const BASE_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  'x-frame-options': 'DENY',
};
const NOTICE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

/** The slug a Host header names under the apps domain (port ignored), or undefined: a string check, nothing more. */
export function slugOf(host: string | undefined, appsDomain: string): string | undefined {
  if (!host) return undefined;
  const colon = host.lastIndexOf(':');
  const name = (colon > host.lastIndexOf(']') ? host.slice(0, colon) : host).toLowerCase();
  const suffix = `.${appsDomain}`;
  if (!name.endsWith(suffix)) return undefined;
  return name.slice(0, -suffix.length);
}

function notice(res: ServerResponse, status: number, title: string, head: boolean): void {
  const body =
    `<!doctype html><html lang="en"><head><meta ` +
    `charset="utf-8"><title>${title}</title></head><body><p>${title}</p></body></html>`;
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': NOTICE_CSP,
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
  });
  res.end(head ? undefined : body);
}

/**
 * Serves published X builds apps by Host header, from the builds service's storage over gRPC, with a small
 * in-memory cache (bundles are immutable; a take-down or a new bundle arrives as a notice that drops the
 * slug). Answers carry the app's strict CSP, never set a cookie, and are not sniffed; an unknown slug is 404
 * and a taken-down app 410.
 */
export function createAppsHost(deps: AppsHostDeps): AppsHost {
  const cacheMs = deps.cacheMs ?? DEFAULT_CACHE_MS;
  const maxSlugs = deps.maxSlugs ?? DEFAULT_MAX_SLUGS;
  const appsDomain = deps.appsDomain.toLowerCase();
  const cache = new Map<string, CachedSlug>();
  // Lives as long as the pub/sub it is on (closed with the edge). A failed subscription leaves the cache
  // window as the bound on staleness.
  deps.pubsub
    ?.subscribe(XBUILDS_APP_CHANGED_CHANNEL, (slug) => {
      cache.delete(slug);
    })
    .catch(() => undefined);

  async function load(slug: string, path: string): Promise<Answer> {
    const now = Date.now();
    let entry = cache.get(slug);
    if (entry && entry.until < now) {
      cache.delete(slug);
      entry = undefined;
    }
    const hit = entry?.files.get(path);
    if (hit) return hit;
    const reply = await deps.xbuilds.getAppFile({ slug, path });
    const answer: Answer =
      reply.state === 'live'
        ? { state: 'live', contentType: reply.contentType, body: Buffer.from(reply.body), csp: reply.csp }
        : reply.state === 'taken_down'
          ? { state: 'taken_down' }
          : { state: 'missing' };
    // Unknown slugs are not remembered: a slug published a moment later must be served at once.
    if (answer.state === 'missing') return answer;
    if (!entry) {
      if (cache.size >= maxSlugs) cache.delete(cache.keys().next().value!);
      entry = { until: now + cacheMs, files: new Map() };
      cache.set(slug, entry);
    }
    entry.files.set(path, answer);
    return answer;
  }

  async function serve(req: IncomingMessage, res: ServerResponse, slug: string): Promise<void> {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.writeHead(405, { ...BASE_HEADERS, allow: 'GET, HEAD', 'content-length': 0 });
      res.end();
      return;
    }
    const path = new URL(req.url ?? '/', 'http://apps.invalid').pathname;
    if (!SLUG.test(slug) || path.length > MAX_PATH) return notice(res, 404, 'No app here.', head);
    let answer: Answer;
    try {
      answer = await load(slug, path);
    } catch {
      return notice(res, 503, 'The app is unavailable for a moment; try again.', head);
    }
    if (answer.state === 'missing') return notice(res, 404, 'No app here.', head);
    if (answer.state === 'taken_down') return notice(res, 410, 'This app was taken down.', head);
    res.writeHead(200, {
      ...BASE_HEADERS,
      'content-type': answer.contentType,
      'content-security-policy': answer.csp,
      'cache-control': 'public, max-age=60',
      'content-length': answer.body.length,
    });
    res.end(head ? undefined : answer.body);
  }

  return {
    handle(req, res) {
      const slug = slugOf(req.headers.host, appsDomain);
      if (slug === undefined) return false;
      serve(req, res, slug).catch(() => {
        if (!res.headersSent) notice(res, 500, 'The app could not be served.', false);
        else res.destroy();
      });
      return true;
    },
  };
}

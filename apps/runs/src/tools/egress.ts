import { Agent, type Dispatcher } from 'undici';
import { isPrivateLiteralHost, pointsAtPrivateAddress, privateGuardedLookup } from '@sbc/egress';

/** A fetch or webhook target this service refuses to dial (loopback or private, with EGRESS_DENY_PRIVATE). */
export class EgressDenied extends Error {
  constructor(hostname: string) {
    super(`${hostname} is a loopback or private address, which this service does not dial`);
    this.name = 'EgressDenied';
  }
}

export interface EgressRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** The response body is cut at this many bytes. */
  maxBodyBytes: number;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  truncated: boolean;
}

/** Outbound HTTP for runs' fetch tool and webhook deliveries, behind the egress filter. */
export interface Egress {
  /** Whether a URL is refused at write time (a webhook endpoint being registered). */
  refuses(url: string): Promise<boolean>;
  /** Sends one request without following redirects (a redirect could lead past the filter). */
  send(request: EgressRequest): Promise<EgressResponse>;
  close(): Promise<void>;
}

async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    if (size + buffer.length > max) {
      chunks.push(buffer.subarray(0, max - size));
      truncated = true;
      body.destroy();
      break;
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated };
}

export function createEgress(options: { denyPrivate: boolean; timeoutMs: number }): Egress {
  // The guarded lookup checks the address actually connected to, so a name cannot pass a check and then
  // resolve inward; IP literals skip the lookup and are checked before dialing.
  const agent = new Agent({
    connect: { timeout: options.timeoutMs, ...(options.denyPrivate ? { lookup: privateGuardedLookup } : {}) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  return {
    async refuses(url) {
      return options.denyPrivate && (await pointsAtPrivateAddress(url));
    },
    async send(request) {
      if (options.denyPrivate && isPrivateLiteralHost(request.url.hostname)) throw new EgressDenied(request.url.hostname);
      const reply = await agent.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: request.method as Dispatcher.HttpMethod,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
      });
      const { text, truncated } = await readCapped(reply.body, request.maxBodyBytes);
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(reply.headers)) if (value !== undefined) headers[name] = value;
      return { status: reply.statusCode, headers, body: text, truncated };
    },
    close: () => agent.close(),
  };
}

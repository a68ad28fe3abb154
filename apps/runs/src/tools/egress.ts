import { Agent, type Dispatcher } from 'undici';
import { createEgressPolicy, type EgressCaller, type PrivateEgress, type Resolver } from '@sbc/egress';

interface EgressRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** The response body is cut at this many bytes. */
  maxBodyBytes: number;
  /** Whose request this is: an operator's may reach loopback and private addresses where the policy allows. */
  dialAs: EgressCaller;
}

interface EgressResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  truncated: boolean;
}

/** Outbound HTTP for runs' fetch tool and webhook deliveries, behind the egress policy (libs/egress). */
export interface Egress {
  /** Why a URL is refused at write time (a webhook endpoint being registered), or undefined. */
  refusal(url: string, caller: EgressCaller): Promise<string | undefined>;
  /** Sends one request without following redirects (a redirect could lead past the filter). */
  send(request: EgressRequest): Promise<EgressResponse>;
  close(): Promise<void>;
}

async function readCapped(
  body: Dispatcher.ResponseData['body'],
  max: number,
): Promise<{ text: string; truncated: boolean }> {
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

export interface EgressOptions {
  privateEgress: PrivateEgress;
  /** The gateway's own origins, which runs never dial through the fetch tool or a webhook. */
  ownOrigins: () => ReadonlyArray<string | undefined>;
  timeoutMs: number;
  resolve?: Resolver;
}

/**
 * Every fetch and webhook is dialed for the caller that asked for it: the edge says whether that is an
 * operator (the account service decides), and the run or endpoint keeps it.
 */
export function createEgress(options: EgressOptions): Egress {
  const policy = createEgressPolicy({
    privateEgress: options.privateEgress,
    ownOrigins: options.ownOrigins,
    resolve: options.resolve,
  });
  // The connector checks the address actually connected to, so a name cannot pass the write-time check and
  // then resolve inward; IP literals skip the lookup and are checked before dialing.
  const agentFor = (caller: EgressCaller) =>
    new Agent({
      connect: policy.connector(caller, { timeout: options.timeoutMs }),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  const agents: Record<EgressCaller, Agent> = { tenant: agentFor('tenant'), operator: agentFor('operator') };
  return {
    refusal: (url, caller) => policy.refusal(url, caller),
    async send(request) {
      const reply = await agents[request.dialAs].request({
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
    close: async () => {
      await Promise.all([agents.tenant.close(), agents.operator.close()]);
    },
  };
}

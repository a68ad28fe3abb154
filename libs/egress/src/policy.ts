import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { buildConnector } from 'undici';
import { canonicalAddress, classifyAddress, isIpLiteral, isLocalhostName } from './classify';

/** EGRESS_PRIVATE: who may reach loopback and private addresses. */
export const PRIVATE_EGRESS = ['operators', 'everyone', 'none'] as const;
export type PrivateEgress = (typeof PRIVATE_EGRESS)[number];

/**
 * The setting from EGRESS_PRIVATE, or from the deprecated EGRESS_DENY_PRIVATE: `true` there meant no one. Its
 * old default (`false`, anyone) is not carried over: unset and `false` both mean the new default, operators.
 */
export function privateEgressOf(setting: PrivateEgress | undefined, denyPrivate: boolean): PrivateEgress {
  return setting ?? (denyPrivate ? 'none' : 'operators');
}

/** Whom a dial is for: an operator of the service (CONTRACTS "operators"), or any other user. */
export type EgressCaller = 'operator' | 'tenant';

/** Every address a name resolves to; a dependency so a test can make a name answer differently later. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/** A dial the policy refused; `code` lets transport-error mappers recognise it through undici's wrapping. */
export class EgressDeniedError extends Error {
  readonly code = 'EGRESS_DENIED';
  constructor(message: string) {
    super(message);
    this.name = 'EgressDeniedError';
  }
}

export interface EgressPolicyOptions {
  privateEgress: PrivateEgress;
  /**
   * The gateway's own origins (its BASE_URL, its listen address), refused for everyone so a call through the
   * gateway cannot come back into it. Read at each check: a listener on port 0 knows its port only later.
   */
  ownOrigins?: () => ReadonlyArray<string | undefined>;
  resolve?: Resolver;
}

export interface EgressPolicy {
  readonly privateEgress: PrivateEgress;
  /**
   * Write time: why `url` may not be dialed for `caller`, or undefined. IP literals and `localhost` are judged
   * as written, names by what they resolve to now; a name that does not resolve is not refused here (the dial
   * fails on its own, and the dial-time check covers names that change their answer later).
   */
  refusal(url: string | URL, caller: EgressCaller): Promise<string | undefined>;
  /** Dial time: a `lookup` for sockets that fails with EgressDeniedError when any answer is refused. */
  lookup(caller: EgressCaller): LookupFunction;
  /**
   * An undici connector that dials only what the policy allows: IP literals are checked before connecting,
   * names through `lookup`, and the connected socket's peer once more (the gateway's own listener included).
   */
  connector(caller: EgressCaller, options?: buildConnector.BuildOptions): buildConnector.connector;
}

interface Origin {
  hostname: string;
  port: number;
}

function originOf(url: URL): Origin {
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return {
    hostname: url.hostname
      .replace(/^\[|\]$/g, '')
      .toLowerCase()
      .replace(/\.$/, ''),
    port,
  };
}

const WILDCARD = new Set(['0.0.0.0', '::']);
const OWN_ADDRESSES_TTL_MS = 30_000;

/** The addresses this host answers on: a listener on 0.0.0.0 or :: is reached through any of them. */
function localAddresses(): Set<string> {
  const found = new Set<string>();
  for (const list of Object.values(networkInterfaces()))
    for (const item of list ?? []) found.add(canonicalAddress(item.address));
  return found;
}

export function createEgressPolicy(options: EgressPolicyOptions): EgressPolicy {
  const resolve = options.resolve ?? systemResolver;
  const privateAllowed = (caller: EgressCaller) =>
    options.privateEgress === 'everyone' || (options.privateEgress === 'operators' && caller === 'operator');
  const privateRefusal = (host: string) =>
    options.privateEgress === 'none'
      ? `${host} is a loopback or private address, which this service does not dial`
      : `${host} is a loopback or private address, which this service dials only for its operators`;

  /** Why one resolved address may not be dialed for `caller`, naming the host as the caller wrote it. */
  const addressRefusal = (host: string, address: string, caller: EgressCaller): string | undefined => {
    const found = classifyAddress(address);
    if (found.kind === 'refused')
      return (
        `${host} is a ${found.range} address${host === address ? '' : ` (${address})`}, which this service never ` +
        `dials`
      );
    if (found.kind === 'private' && !privateAllowed(caller)) return privateRefusal(host);
    return undefined;
  };

  // Own origins as address:port (names resolved), refreshed now and then; a wildcard listener as its port.
  let own: { at: number; key: string; endpoints: Set<string>; wildcardPorts: Set<number> } | undefined;
  const ownEndpoints = async () => {
    const origins = (options.ownOrigins?.() ?? [])
      .filter((value): value is string => !!value && URL.canParse(value))
      .map((value) => originOf(new URL(value)));
    const key = origins.map((origin) => `${origin.hostname}:${origin.port}`).join(',');
    if (own && own.key === key && Date.now() - own.at < OWN_ADDRESSES_TTL_MS) return own;
    const endpoints = new Set<string>();
    const wildcardPorts = new Set<number>();
    for (const origin of origins) {
      endpoints.add(`${origin.hostname}|${origin.port}`);
      if (WILDCARD.has(origin.hostname)) wildcardPorts.add(origin.port);
      const addresses = isIpLiteral(origin.hostname)
        ? [origin.hostname]
        : (await resolve(origin.hostname).catch(() => [])).map((entry) => entry.address);
      for (const address of addresses) endpoints.add(`${canonicalAddress(address)}|${origin.port}`);
    }
    own = { at: Date.now(), key, endpoints, wildcardPorts };
    return own;
  };
  const isOwn = async (address: string, port: number) => {
    const { endpoints, wildcardPorts } = await ownEndpoints();
    const canonical = canonicalAddress(address);
    if (endpoints.has(`${canonical}|${port}`)) return true;
    return (
      wildcardPorts.has(port) && (classifyAddress(canonical).range === 'loopback' || localAddresses().has(canonical))
    );
  };
  const ownRefusal = (host: string) =>
    `${host} is this gateway's own address; a call through the gateway cannot come back into it`;

  const lookup = (caller: EgressCaller): LookupFunction =>
    ((
      hostname: string,
      lookupOptions: { all?: boolean; family?: number | string },
      callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
    ) => {
      if (isLocalhostName(hostname) && !privateAllowed(caller))
        return callback(new EgressDeniedError(privateRefusal(hostname)), '');
      resolve(hostname).then(
        (answers) => {
          for (const answer of answers) {
            const reason = addressRefusal(hostname, answer.address, caller);
            if (reason) return callback(new EgressDeniedError(reason), '');
          }
          const family =
            lookupOptions.family === 'IPv4'
              ? 4
              : lookupOptions.family === 'IPv6'
                ? 6
                : Number(lookupOptions.family ?? 0);
          const usable = family === 4 || family === 6 ? answers.filter((answer) => answer.family === family) : answers;
          if (lookupOptions.all) return callback(null, usable);
          const first = usable[0];
          if (!first)
            return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
          callback(null, first.address, first.family);
        },
        (err: NodeJS.ErrnoException) => callback(err, ''),
      );
    }) as LookupFunction;

  return {
    privateEgress: options.privateEgress,

    async refusal(url, caller) {
      const parsed = typeof url === 'string' ? new URL(url) : url;
      const { hostname, port } = originOf(parsed);
      const { endpoints } = await ownEndpoints();
      if (endpoints.has(`${hostname}|${port}`)) return ownRefusal(hostname);
      if (isLocalhostName(hostname) && !privateAllowed(caller)) return privateRefusal(hostname);
      const addresses = isIpLiteral(hostname)
        ? [hostname]
        : (await resolve(hostname).catch(() => [])).map((entry) => entry.address);
      for (const address of addresses) {
        const reason = addressRefusal(hostname, address, caller);
        if (reason) return reason;
      }
      for (const address of addresses) if (await isOwn(address, port)) return ownRefusal(hostname);
      return undefined;
    },

    lookup,

    connector(caller, buildOptions = {}) {
      const base = buildConnector({ ...buildOptions, lookup: lookup(caller) } as buildConnector.BuildOptions);
      return (connectOptions, callback) => {
        const { hostname } = connectOptions;
        const literalReason = isIpLiteral(hostname) ? addressRefusal(hostname, hostname, caller) : undefined;
        if (literalReason) return callback(new EgressDeniedError(literalReason), null);
        base(connectOptions, (...args) => {
          const [err, socket] = args;
          if (err) return callback(err, null);
          const peer = socket as Socket;
          const address = peer.remoteAddress ?? '';
          // The address actually connected to, judged once more, and compared with the gateway's own.
          const reason = addressRefusal(hostname, address, caller);
          const refuse = (message: string) => {
            peer.destroy();
            callback(new EgressDeniedError(message), null);
          };
          if (reason) return refuse(reason);
          isOwn(address, peer.remotePort ?? 0).then(
            (same) => (same ? refuse(ownRefusal(hostname)) : callback(null, socket)),
            () => refuse(ownRefusal(hostname)),
          );
        });
      };
    },
  };
}

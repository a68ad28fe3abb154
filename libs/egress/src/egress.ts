import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

// Addresses a hosted service must not be made to dial on a caller's behalf: the host itself, its private
// network, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, and non-unicast ranges.
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** IPv4 written inside IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) reaches the IPv4 host, so it is judged as one. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^::ffff:(?:0:)?(.+)$/i.exec(address);
  if (!match) return undefined;
  const tail = match[1]!;
  if (isIP(tail) === 4) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(tail);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether an IP address (v4 or v6, brackets allowed) is loopback, private, link-local or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIpv4(bare);
  return v4 !== undefined ? PRIVATE.check(v4, 'ipv4') : PRIVATE.check(bare, 'ipv6');
}

/** `localhost` and its subdomains resolve to loopback by definition (RFC 6761), whatever DNS says. */
function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

function lookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
}

/**
 * Whether a URL host is private without asking DNS: a private IP literal, or `localhost`. The socket connects
 * to an IP literal without any lookup, so the dialer checks this itself besides `privateGuardedLookup`.
 */
export function isPrivateLiteralHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) ? isPrivateAddress(bare) : isLoopbackName(bare);
}

/**
 * Whether a URL's host is loopback or private, judged at write time: an IP literal or `localhost` directly, a
 * name by what it resolves to now. A name that does not resolve is not refused here (the probe reports it);
 * the dial-time check in `privateGuardedLookup` covers names that change their answer later.
 */
export async function pointsAtPrivateAddress(baseUrl: string): Promise<boolean> {
  const hostname = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
  if (isIP(hostname) || isLoopbackName(hostname)) return isPrivateLiteralHost(hostname);
  try {
    return (await lookupAll(hostname)).some((entry) => isPrivateAddress(entry.address));
  } catch {
    return false;
  }
}

export class PrivateAddressError extends Error {
  readonly code = 'EGRESS_DENIED';
  constructor(hostname: string) {
    super(`${hostname} resolves to a loopback or private address, which this service does not dial`);
    this.name = 'PrivateAddressError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `dns.lookup` for the dialer's socket that refuses loopback and private answers, so the address checked is
 * the address connected to (a name cannot pass the write-time check and then resolve inward).
 */
export function privateGuardedLookup(hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void {
  if (isLoopbackName(hostname)) {
    callback(new PrivateAddressError(hostname), '');
    return;
  }
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    if (addresses.some((entry) => isPrivateAddress(entry.address))) return callback(new PrivateAddressError(hostname), '');
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
    callback(null, first.address, first.family);
  });
}

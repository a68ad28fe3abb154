import ipaddr from 'ipaddr.js';

/**
 * What an address is to the egress policy (CONTRACTS "Models and routing", Egress):
 * - `public`: dialed for anyone;
 * - `private`: loopback and private networks, dialed only as EGRESS_PRIVATE allows (operators by default);
 * - `refused`: never dialed for anyone (link-local, multicast, documentation and other special ranges, and
 *   the IPv6 spellings that carry an IPv4 address inside them, except NAT64 and tunnels to a public one).
 */
export type AddressKind = 'public' | 'private' | 'refused';

export interface AddressClass {
  kind: AddressKind;
  /** The range's name (ipaddr.js's, or ours for the forms it does not name), for messages. */
  range: string;
}

const PRIVATE_V4 = new Set(['loopback', 'private', 'carrierGradeNat']);
const PRIVATE_V6 = new Set(['loopback', 'uniqueLocal']);
// IPv6 forms that carry an IPv4 address, which the host's own stack or a translator delivers to that IPv4
// host. None is needed to reach a public host, so they are refused outright (NAT64's well-known prefix aside).
const EMBEDS_V4 = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052']);

/** Two 16-bit IPv6 groups as the IPv4 address they spell. */
function v4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
}

/**
 * The IPv4 addresses a tunnel form leads to: 6to4 (`2002:AABB:CCDD::/48`) names it in bits 16–47; Teredo
 * (`2001:0::/32`) its server in bits 32–63 and the client, inverted, in the last 32 bits.
 */
function tunnelV4s(range: '6to4' | 'teredo', parts: number[]): ipaddr.IPv4[] {
  if (range === '6to4') return [v4Of(parts[1]!, parts[2]!)];
  return [v4Of(parts[2]!, parts[3]!), v4Of(parts[6]! ^ 0xffff, parts[7]! ^ 0xffff)];
}

function classifyV4(address: ipaddr.IPv4): AddressClass {
  const range = address.range();
  if (range === 'unicast') return { kind: 'public', range };
  return { kind: PRIVATE_V4.has(range) ? 'private' : 'refused', range };
}

function classifyV6(address: ipaddr.IPv6): AddressClass {
  const parts = address.parts;
  // `::a.b.c.d` (IPv4-compatible, deprecated by RFC 4291); ipaddr.js calls some of these unicast. `::` and `::1`
  // are left to the ranges below.
  if (parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || parts[7]! > 1))
    return { kind: 'refused', range: 'ipv4Compatible' };
  const range = address.range();
  if (range === 'unicast') return { kind: 'public', range };
  if (PRIVATE_V6.has(range)) return { kind: 'private', range };
  // On an IPv6-only network with DNS64, every public name resolves into 64:ff9b::/96: those are judged by the
  // IPv4 address inside, and any spelling of a non-public one is refused for everyone.
  if (range === 'rfc6052' && parts[0] === 0x64 && parts[1] === 0xff9b && parts[2] === 0) {
    return { kind: classifyV4(v4Of(parts[6]!, parts[7]!)).kind === 'public' ? 'public' : 'refused', range };
  }
  if (EMBEDS_V4.has(range)) return { kind: 'refused', range };
  // Tunnels to a public IPv4 address are ordinary public addresses; to any other, refused.
  if (range === '6to4' || range === 'teredo') {
    return {
      kind: tunnelV4s(range, parts).every((v4) => classifyV4(v4).kind === 'public') ? 'public' : 'refused',
      range,
    };
  }
  return { kind: 'refused', range };
}

/**
 * Classifies one IP address in any spelling ipaddr.js reads (brackets, a zone, and the integer, hex and
 * octal IPv4 forms included). Anything that is not an IP address is refused: the caller resolves names first.
 */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return { kind: 'refused', range: 'not an IP address' };
  const parsed = ipaddr.parse(bare);
  return parsed.kind() === 'ipv4' ? classifyV4(parsed as ipaddr.IPv4) : classifyV6(parsed as ipaddr.IPv6);
}

/** Whether a host is an IP literal (as a URL writes it, brackets allowed) rather than a name. */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}

/** The address in its canonical form (`127.0.0.1`, `::1`), for comparing the same address in two spellings. */
export function canonicalAddress(address: string): string {
  const parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  // A mapped address is the IPv4 host a dual-stack socket reports it as.
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address().toString()
    : parsed.toString();
}

/** `localhost` and its subdomains are loopback by definition (RFC 6761), whatever a resolver says. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

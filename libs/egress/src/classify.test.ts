import { canonicalAddress, classifyAddress, isLocalhostName } from './classify';

describe('classifyAddress', () => {
  it.each([
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['100::1', 'discard'],
    ['::ffff:127.0.0.1', 'ipv4Mapped'],
    ['::ffff:7f00:1', 'ipv4Mapped'],
    ['::ffff:8.8.8.8', 'ipv4Mapped'],
    ['[::ffff:7f00:1]', 'ipv4Mapped'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::a00:1', 'ipv4Compatible'],
    ['::808:808', 'ipv4Compatible'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['64:ff9b:1::7f00:1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
    ['2002:a9fe:a9fe::1', '6to4'],
    // Teredo with a public server and the client 127.0.0.1 (inverted: 80ff:fffe).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo'],
    ['2001:2::1', 'benchmarking'],
    ['not-an-ip', 'not an IP address'],
    ['', 'not an IP address'],
  ])('%s is never dialed (%s)', (address, range) => {
    expect(classifyAddress(address)).toEqual({ kind: 'refused', range });
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.5.6.7', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['017700000001', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['fd00::1', 'uniqueLocal'],
    ['fc00::1', 'uniqueLocal'],
  ])('%s is loopback or private (%s)', (address, range) => {
    expect(classifyAddress(address)).toEqual({ kind: 'private', range });
  });

  it.each([
    '64:ff9b::808:808',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '1.1.1.1',
    '2606:4700::1111',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ])('%s is public', (address) => {
    expect(classifyAddress(address).kind).toBe('public');
  });
});

describe('names and spellings', () => {
  it('localhost and its subdomains are loopback by name', () => {
    for (const name of ['localhost', 'LOCALHOST', 'localhost.', 'api.localhost'])
      expect(isLocalhostName(name)).toBe(true);
    for (const name of ['localhost.example.com', 'mylocalhost', 'example.com'])
      expect(isLocalhostName(name)).toBe(false);
  });

  it('one address in two spellings has one canonical form', () => {
    expect(canonicalAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(canonicalAddress('[0:0:0:0:0:0:0:1]')).toBe('::1');
    expect(canonicalAddress('2130706433')).toBe('127.0.0.1');
  });
});

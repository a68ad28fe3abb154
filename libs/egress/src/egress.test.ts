import { isPrivateAddress, pointsAtPrivateAddress, privateGuardedLookup, PrivateAddressError } from './egress';

describe('private addresses (EGRESS_DENY_PRIVATE)', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '[::1]', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:a00:1'])(
    '%s is private',
    (address) => {
      expect(isPrivateAddress(address)).toBe(true);
    },
  );

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', 'not-an-ip'])('%s is not', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('judges a URL by its literal host, localhost by name, and a public literal as public', async () => {
    await expect(pointsAtPrivateAddress('http://127.0.0.1:8090/v1')).resolves.toBe(true);
    await expect(pointsAtPrivateAddress('http://[::1]:8090')).resolves.toBe(true);
    await expect(pointsAtPrivateAddress('http://localhost:11434')).resolves.toBe(true);
    await expect(pointsAtPrivateAddress('http://api.localhost')).resolves.toBe(true);
    await expect(pointsAtPrivateAddress('https://8.8.8.8/v1')).resolves.toBe(false);
  });

  it('the dial-time lookup refuses a name that resolves inward', async () => {
    const error = await new Promise((resolve) => privateGuardedLookup('localhost', {}, (err) => resolve(err)));
    expect(error).toBeInstanceOf(PrivateAddressError);
    const literal = await new Promise((resolve) => privateGuardedLookup('127.0.0.1', {}, (err) => resolve(err)));
    expect(literal).toBeInstanceOf(PrivateAddressError);
  });
});

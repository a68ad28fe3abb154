export { isPrivateAddress, isPrivateLiteralHost, pointsAtPrivateAddress, privateGuardedLookup, PrivateAddressError } from './egress';

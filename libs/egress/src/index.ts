export {
  canonicalAddress,
  classifyAddress,
  isIpLiteral,
  isLocalhostName,
  type AddressClass,
  type AddressKind,
} from './classify';
export {
  createEgressPolicy,
  EgressDeniedError,
  PRIVATE_EGRESS,
  privateEgressOf,
  systemResolver,
  type EgressCaller,
  type EgressPolicy,
  type EgressPolicyOptions,
  type PrivateEgress,
  type Resolver,
} from './policy';

export { hashSecret, hashSecretHex, maskSecret, newId, newSecret, type IdPrefix } from './ids';

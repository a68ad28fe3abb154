export { hashSecret, maskSecret, newId, newSecret, type IdPrefix } from './ids';
